import type { Audience, Destination, PreviewAudienceBody } from '@sluice/server/api'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { changes, keys } from '../api/queries.ts'
import { type Draft, emptyDraft, fromDefinition, toDefinition } from '../model/audience-draft.ts'
import { ErrorBox } from '../ui/errors.tsx'
import { TextField } from '../ui/fields.tsx'
import { NodeEditor } from './AudienceBuilder.tsx'
import { DestinationChoice } from './DestinationChoice.tsx'
import { MemberName } from './MemberName.tsx'

/**
 * An audience's form: name, definition tree, anonymous visitors, destinations; preview before saving.
 * Given `audience`, it starts from the saved one and saves changes to it; else it creates one.
 */
export function AudienceForm({
  destinations,
  audience,
  onSaved,
}: {
  destinations: Destination[]
  audience?: Audience
  onSaved?: (saved: Audience) => void
}) {
  const queryClient = useQueryClient()
  const [name, setName] = useState(audience?.name ?? '')
  const [draft, setDraft] = useState<Draft>(() =>
    audience ? fromDefinition(audience.definition) : emptyDraft('all'),
  )
  const [destinationIds, setDestinationIds] = useState<string[]>(audience?.destinationIds ?? [])
  const [includeAnonymous, setIncludeAnonymous] = useState(audience?.includeAnonymous ?? false)
  const previewed = JSON.stringify({ definition: toDefinition(draft), includeAnonymous })
  const preview = useMutation({
    // The body as JSON: the same text for the same definition, to tell whether the draft changed since.
    mutationFn: (body: string) => changes.previewAudience(JSON.parse(body) as PreviewAudienceBody),
  })
  // A preview of a definition since edited is not shown.
  const shown = preview.variables === previewed ? preview.data : undefined
  const save = useMutation({
    mutationFn: () => {
      const body = { name, definition: toDefinition(draft), destinationIds, includeAnonymous }
      return audience ? changes.updateAudience(audience.id, body) : changes.createAudience(body)
    },
    onSuccess: (saved) => {
      if (!audience) {
        setName('')
        setDraft(emptyDraft('all'))
        setDestinationIds([])
      }
      preview.reset()
      onSaved?.(saved)
      return queryClient.invalidateQueries({ queryKey: keys.audiences })
    },
  })
  const error = save.error ?? preview.error
  const submit = (event: FormEvent) => {
    event.preventDefault()
    preview.reset()
    save.mutate()
  }
  return (
    <form onSubmit={submit} className="card spaced" noValidate aria-labelledby="audience-form">
      <h2 id="audience-form">{audience ? 'Settings' : 'New audience'}</h2>
      <TextField
        label="Audience name"
        value={name}
        onChange={setName}
        error={error}
        field="/name"
        hint="Its key, the trait destinations get, is the name in snake_case."
      />
      <fieldset className="plain-fieldset">
        <legend>Definition</legend>
        <NodeEditor draft={draft} onChange={setDraft} at="/definition" label="1" error={error} />
      </fieldset>
      <label className="check">
        <input
          type="checkbox"
          checked={includeAnonymous}
          onChange={(event) => setIncludeAnonymous(event.target.checked)}
        />{' '}
        Include anonymous visitors (synced with their anonymousId)
      </label>
      <DestinationChoice
        destinations={destinations}
        chosen={destinationIds}
        onChange={setDestinationIds}
        error={error}
      />
      <ErrorBox error={error} fields={['/name', '/definition', '/destinationIds']} />
      {shown && (
        <div role="status" className="preview">
          <p>
            <strong>{shown.size.toLocaleString()}</strong> {shown.size === 1 ? 'profile' : 'profiles'} now.
          </p>
          {shown.sampleMembers.length > 0 && (
            <>
              <p className="muted">For example:</p>
              <ul aria-label="Sample profiles" className="member-list">
                {shown.sampleMembers.map((member) => (
                  <li key={member.profileId}>
                    <MemberName member={member} />
                  </li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
      {save.data && (
        <p role="status" className="muted">
          {audience ? 'Changes saved.' : `Audience ${save.data.name} saved.`}
        </p>
      )}
      <div className="row-actions">
        <button
          type="button"
          className="secondary"
          disabled={preview.isPending}
          onClick={() => {
            save.reset()
            preview.mutate(previewed)
          }}
        >
          Preview
        </button>
        <button type="submit" disabled={save.isPending}>
          {audience ? 'Save changes' : 'Save audience'}
        </button>
      </div>
    </form>
  )
}
