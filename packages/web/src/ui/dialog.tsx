import { type ReactNode, useEffect, useId, useRef, useState } from 'react'
import { ErrorBox } from './errors.tsx'

/**
 * A button for an action that cannot be undone: it opens a modal dialog (the native `<dialog>`, role
 * `dialog`, focus kept inside, Escape closes) that says what will happen, confirmed with its own button
 * ("Delete", "Revoke", …). The dialog stays open while the action runs and shows its error.
 */
export function ConfirmButton({
  label,
  accessibleLabel,
  title,
  children,
  confirmLabel,
  onConfirm,
  className = 'danger',
  disabled = false,
}: {
  /** The button's text. */
  label: string
  /** The button's accessible name when its text alone is ambiguous (e.g. "Revoke Support"). */
  accessibleLabel?: string
  /** The dialog's heading, a question: "Delete the destination Orders?" */
  title: string
  /** What happens, in a sentence or two. */
  children: ReactNode
  /** The confirming button's text: "Delete". */
  confirmLabel: string
  /** Runs the action; the dialog closes when it resolves, and shows the error when it rejects. */
  onConfirm: () => Promise<unknown>
  className?: string
  disabled?: boolean
}) {
  const dialog = useRef<HTMLDialogElement>(null)
  const titleId = useId()
  const [open, setOpen] = useState(false)
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    if (open && dialog.current && !dialog.current.open) dialog.current.showModal()
    if (!open && dialog.current?.open) dialog.current.close()
  }, [open])
  const confirm = async () => {
    setPending(true)
    setError(null)
    try {
      await onConfirm()
      setOpen(false)
    } catch (failure) {
      setError(failure)
    } finally {
      setPending(false)
    }
  }
  return (
    <>
      <button
        type="button"
        className={className}
        aria-label={accessibleLabel}
        disabled={disabled}
        onClick={() => setOpen(true)}
      >
        {label}
      </button>
      {/* Always there, closed until asked: closing a modal dialog gives the focus back to the button. */}
      <dialog ref={dialog} aria-labelledby={titleId} className="confirm" onClose={() => setOpen(false)}>
        {open && (
          <>
            <h2 id={titleId}>{title}</h2>
            <div className="confirm-body">{children}</div>
            <ErrorBox error={error} />
            <div className="row-actions confirm-actions">
              <button type="button" className="secondary" onClick={() => setOpen(false)}>
                Cancel
              </button>
              <button type="button" className="danger" disabled={pending} onClick={confirm}>
                {confirmLabel}
              </button>
            </div>
          </>
        )}
      </dialog>
    </>
  )
}
