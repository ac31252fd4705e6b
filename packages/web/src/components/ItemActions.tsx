import { type QueryKey, useMutation, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { ConfirmButton } from '../ui/dialog.tsx'
import { ErrorBox } from '../ui/errors.tsx'
import { TextField } from '../ui/fields.tsx'

/**
 * Rename and delete buttons of one audience or computed trait (admins only: the caller leaves them out
 * for viewers). Renaming keeps the key, so destinations keep getting the same trait.
 */
export function ItemActions({
  name,
  itemKey,
  rename: renameTo,
  remove: removeIt,
  queryKey,
  noun,
}: {
  name: string
  itemKey: string
  /** Renames it through the API. */
  rename: (name: string) => Promise<unknown>
  /** Deletes it through the API. */
  remove: () => Promise<unknown>
  /** The list query to refresh after a change. */
  queryKey: QueryKey
  /** What it is, for the confirmation: "audience", "computed trait". */
  noun: string
}) {
  const queryClient = useQueryClient()
  const [draft, setDraft] = useState<string | null>(null)
  const refresh = () => queryClient.invalidateQueries({ queryKey })
  const rename = useMutation({
    mutationFn: renameTo,
    onSuccess: () => {
      setDraft(null)
      return refresh()
    },
  })
  if (draft !== null) {
    return (
      <form
        aria-label={`Rename ${name}`}
        className="inline-form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault()
          rename.mutate(draft)
        }}
      >
        <TextField
          label={`New name for ${name}`}
          value={draft}
          onChange={setDraft}
          error={rename.error}
          field="/name"
          hint={
            <>
              The key stays <code>{itemKey}</code>.
            </>
          }
        />
        <ErrorBox error={rename.error} fields={['/name']} />
        <div className="row-actions">
          <button type="submit" disabled={rename.isPending}>
            Save name
          </button>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              rename.reset()
              setDraft(null)
            }}
          >
            Cancel
          </button>
        </div>
      </form>
    )
  }
  return (
    <div className="row-actions">
      <button type="button" className="link" aria-label={`Rename ${name}`} onClick={() => setDraft(name)}>
        Rename
      </button>
      <ConfirmButton
        label="Delete"
        accessibleLabel={`Delete ${name}`}
        className="link danger-link"
        title={`Delete the ${noun} ${name}?`}
        confirmLabel="Delete"
        onConfirm={async () => {
          await removeIt()
          await refresh()
        }}
      >
        <p>Its values are deleted; nothing more is sent to its destinations about it.</p>
      </ConfirmButton>
    </div>
  )
}
