/**
 * "Rotate secret": a dialog that rotates one of a destination's signing secrets with a grace period
 * (the old secret keeps signing beside the new one meanwhile), then shows the new secret this once,
 * with a copy button. Closing the dialog forgets it: it is never shown again.
 */
import { GRACE_PERIOD_SECONDS, type RotationAnswer, type SecretKind } from '@sluice/server/api'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useEffect, useId, useRef, useState } from 'react'
import { changes, keys } from '../api/queries.ts'
import { CopyButton, formatTime } from '../ui/content.tsx'
import { ErrorBox } from '../ui/errors.tsx'
import { SelectField } from '../ui/fields.tsx'

const KIND_LABELS: Record<SecretKind, string> = {
  standardWebhooks: 'Standard Webhooks secret (webhook-signature)',
  sharedSecret: 'Shared secret (X-Signature)',
}

/** Grace periods offered, in seconds (the API takes any whole number up to 7 days). */
const GRACES = ['0', '3600', String(GRACE_PERIOD_SECONDS.default), '259200', String(GRACE_PERIOD_SECONDS.max)]
const GRACE_LABELS: Record<string, string> = {
  '0': 'None: the old secret stops signing at once',
  '3600': '1 hour',
  [String(GRACE_PERIOD_SECONDS.default)]: '1 day',
  '259200': '3 days',
  [String(GRACE_PERIOD_SECONDS.max)]: '7 days',
}

export function RotateSecret({
  destinationId,
  kinds,
}: {
  destinationId: string
  kinds: readonly SecretKind[]
}) {
  const queryClient = useQueryClient()
  const dialog = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  const [open, setOpen] = useState(false)
  const [kind, setKind] = useState<SecretKind>(kinds[0] ?? 'standardWebhooks')
  const [grace, setGrace] = useState(String(GRACE_PERIOD_SECONDS.default))
  const rotate = useMutation({
    mutationFn: () => changes.rotateSecret(destinationId, { kind, gracePeriodSeconds: Number(grace) }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.rotations(destinationId) }),
  })
  useEffect(() => {
    if (open && dialog.current && !dialog.current.open) dialog.current.showModal()
    if (!open && dialog.current?.open) dialog.current.close()
  }, [open])
  const close = () => {
    setOpen(false)
    rotate.reset() // the new secret is not kept anywhere once the dialog closes
  }
  const rotated: RotationAnswer | undefined = rotate.data
  return (
    <>
      <button
        type="button"
        className="secondary"
        onClick={() => {
          setKind(kinds[0] ?? 'standardWebhooks')
          setOpen(true)
        }}
      >
        Rotate secret
      </button>
      {/* Always there, closed until asked: closing a modal dialog gives the focus back to its button. */}
      <dialog ref={dialog} aria-labelledby={titleId} className="confirm" onClose={close}>
        {open && (
          <>
            <h2 id={titleId}>{rotated ? 'New secret' : 'Rotate a signing secret'}</h2>
            {rotated ? (
              <div className="confirm-body" role="status">
                <p>
                  Shown only now: copy it into your receivers' configuration. Until{' '}
                  {formatTime(rotated.rotation.graceEndsAt)} requests are signed with both the old and the new
                  secret.
                </p>
                <p className="key-row">
                  <code className="new-token">{rotated.secret}</code>{' '}
                  <CopyButton text={rotated.secret} label="Copy secret" />
                </p>
              </div>
            ) : (
              <div className="confirm-body">
                <p>
                  The new secret signs at once. During the grace period the old one keeps signing beside it,
                  so receivers keep working while you give them the new one.
                </p>
                {kinds.length > 1 && (
                  <SelectField
                    label="Secret"
                    value={kind}
                    options={kinds}
                    optionLabel={(value) => KIND_LABELS[value]}
                    onChange={setKind}
                    error={rotate.error}
                    field="/kind"
                  />
                )}
                <SelectField
                  label="Grace period"
                  value={grace}
                  options={GRACES}
                  optionLabel={(value) => GRACE_LABELS[value] ?? `${value} s`}
                  onChange={setGrace}
                  error={rotate.error}
                  field="/gracePeriodSeconds"
                />
              </div>
            )}
            <ErrorBox error={rotate.error} fields={['/kind', '/gracePeriodSeconds']} />
            <div className="row-actions confirm-actions">
              {rotated ? (
                <button type="button" onClick={close}>
                  Done
                </button>
              ) : (
                <>
                  <button type="button" className="secondary" onClick={close}>
                    Cancel
                  </button>
                  <button type="button" disabled={rotate.isPending} onClick={() => rotate.mutate()}>
                    Rotate
                  </button>
                </>
              )}
            </div>
          </>
        )}
      </dialog>
    </>
  )
}
