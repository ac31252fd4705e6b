import { useMutation, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useId, useState } from 'react'
import { ApiError, api, type ComputedTrait, type Destination } from '../api.ts'
import { ErrorBox, FieldError, TextField } from '../ui.tsx'
import { toWhere, type WhereDraft, WhereEditor } from './AudienceBuilder.tsx'
import { DestinationChoice } from './DestinationChoice.tsx'

const KINDS = [
  'count',
  'sum',
  'avg',
  'min',
  'max',
  'first',
  'last',
  'most_frequent',
  'unique_list',
  'unique_list_count',
] as const

/** A computed trait: a value per profile from its track calls of one event. */
export function ComputedTraitForm({ destinations }: { destinations: Destination[] }) {
  const queryClient = useQueryClient()
  const id = useId()
  const [name, setName] = useState('')
  const [kind, setKind] = useState<string>('count')
  const [event, setEvent] = useState('')
  const [property, setProperty] = useState('')
  const [withinDays, setWithinDays] = useState('')
  const [where, setWhere] = useState<WhereDraft[]>([])
  const [destinationIds, setDestinationIds] = useState<string[]>([])
  const create = useMutation({
    mutationFn: () =>
      api<ComputedTrait>('POST', '/computed-traits', {
        name,
        kind,
        event: event.trim(),
        ...(kind === 'count' || property.trim() === '' ? {} : { property: property.trim() }),
        ...(where.length === 0 ? {} : { where: toWhere(where) }),
        ...(withinDays.trim() === '' ? {} : { withinDays: Number(withinDays) }),
        destinationIds,
      }),
    onSuccess: () => {
      setName('')
      setEvent('')
      setProperty('')
      setWithinDays('')
      setWhere([])
      setDestinationIds([])
      return queryClient.invalidateQueries({ queryKey: ['computed-traits'] })
    },
  })
  const error = create.error
  const submit = (formEvent: FormEvent) => {
    formEvent.preventDefault()
    create.mutate()
  }
  const kindFailed = error instanceof ApiError && error.field === '/kind'
  return (
    <form onSubmit={submit} className="card spaced" noValidate aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>New computed trait</h2>
      <TextField label="Computed trait name" value={name} onChange={setName} error={error} field="/name" />
      <div className="field">
        <label htmlFor={`${id}-kind`}>Kind</label>
        <select
          id={`${id}-kind`}
          value={kind}
          aria-invalid={kindFailed || undefined}
          onChange={(change) => setKind(change.target.value)}
        >
          {KINDS.map((value) => (
            <option key={value} value={value}>
              {value}
            </option>
          ))}
        </select>
        <FieldError error={error} field="/kind" />
      </div>
      <TextField label="Track event" value={event} onChange={setEvent} error={error} field="/event" />
      {kind !== 'count' && (
        <TextField
          label="Property"
          value={property}
          onChange={setProperty}
          error={error}
          field="/property"
          hint="A property of the calls; a dotted path reads nested ones."
        />
      )}
      <fieldset className="plain-fieldset">
        <legend>Only calls where</legend>
        <WhereEditor
          where={where}
          onChange={setWhere}
          at="/where"
          context="new computed trait"
          error={error}
        />
      </fieldset>
      <TextField
        label="Only the last N days"
        type="number"
        value={withinDays}
        onChange={setWithinDays}
        error={error}
        field="/withinDays"
        hint="Empty: all history."
      />
      <DestinationChoice
        destinations={destinations}
        chosen={destinationIds}
        onChange={setDestinationIds}
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
