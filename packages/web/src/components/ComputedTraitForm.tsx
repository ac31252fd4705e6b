import { COMPUTED_TRAIT_KINDS, type Destination } from '@sluice/server/api'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useId, useState } from 'react'
import { changes, keys } from '../api/queries.ts'
import {
  type ComputedTraitDraft,
  emptyComputedTrait,
  readsProperty,
  toComputedTraitBody,
} from '../model/computed-trait-draft.ts'
import { ErrorBox } from '../ui/errors.tsx'
import { SelectField, TextField } from '../ui/fields.tsx'
import { WhereEditor } from './AudienceBuilder.tsx'
import { DestinationChoice } from './DestinationChoice.tsx'

/** A computed trait: a value per profile from its track calls of one event. */
export function ComputedTraitForm({ destinations }: { destinations: Destination[] }) {
  const queryClient = useQueryClient()
  const id = useId()
  const [draft, setDraft] = useState<ComputedTraitDraft>(emptyComputedTrait)
  const edit =
    <Key extends keyof ComputedTraitDraft>(key: Key) =>
    (value: ComputedTraitDraft[Key]) =>
      setDraft((current) => ({ ...current, [key]: value }))
  const create = useMutation({
    mutationFn: () => changes.createComputedTrait(toComputedTraitBody(draft)),
    // The kind chosen stays for the next one.
    onSuccess: () => {
      setDraft((current) => ({ ...emptyComputedTrait(), kind: current.kind }))
      return queryClient.invalidateQueries({ queryKey: keys.computedTraits })
    },
  })
  const error = create.error
  const submit = (formEvent: FormEvent) => {
    formEvent.preventDefault()
    create.mutate()
  }
  return (
    <form onSubmit={submit} className="card spaced" noValidate aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>New computed trait</h2>
      <TextField
        label="Computed trait name"
        value={draft.name}
        onChange={edit('name')}
        error={error}
        field="/name"
      />
      <SelectField
        label="Kind"
        value={draft.kind}
        options={COMPUTED_TRAIT_KINDS}
        onChange={edit('kind')}
        error={error}
        field="/kind"
      />
      <TextField
        label="Track event"
        value={draft.event}
        onChange={edit('event')}
        error={error}
        field="/event"
      />
      {readsProperty(draft.kind) && (
        <TextField
          label="Property"
          value={draft.property}
          onChange={edit('property')}
          error={error}
          field="/property"
          hint="A property of the calls; a dotted path reads nested ones."
        />
      )}
      <fieldset className="plain-fieldset">
        <legend>Only calls where</legend>
        <WhereEditor
          where={draft.where}
          onChange={edit('where')}
          at="/where"
          context="new computed trait"
          error={error}
        />
      </fieldset>
      <TextField
        label="Only the last N days"
        type="number"
        value={draft.withinDays}
        onChange={edit('withinDays')}
        error={error}
        field="/withinDays"
        hint="Empty: all history."
      />
      <DestinationChoice
        destinations={destinations}
        chosen={draft.destinationIds}
        onChange={edit('destinationIds')}
        error={error}
      />
      <ErrorBox
        error={error}
        fields={['/name', '/kind', '/event', '/property', '/where', '/withinDays', '/destinationIds']}
      />
      {create.data && (
        <p role="status" className="muted">
          Computed trait {create.data.key} saved.
        </p>
      )}
      <button type="submit" disabled={create.isPending}>
        Save computed trait
      </button>
    </form>
  )
}
