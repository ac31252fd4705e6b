import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { type Audience, api, type ComputedTrait, type Destination, get } from '../api.ts'
import { useCanWrite } from '../session.ts'
import { ErrorBox, formatTime, Link, Loading, StatusBadge, TableScroll, TextField } from '../ui.tsx'
import { type Draft, emptyDraft, NodeEditor, toDefinition } from './AudienceBuilder.tsx'
import { ComputedTraitForm } from './ComputedTraitForm.tsx'
import { DestinationChoice } from './DestinationChoice.tsx'
import { ItemActions } from './ItemActions.tsx'
import { ProfileLookup } from './ProfileLookup.tsx'

/** Audiences and computed traits: lists, creation, preview; and a profile looked up by user id. */
export function Audiences() {
  const canWrite = useCanWrite()
  const audiences = useQuery({
    queryKey: ['audiences'],
    queryFn: () => get<{ audiences: Audience[] }>('/audiences'),
    refetchInterval: (query) =>
      query.state.data?.audiences.some((audience) => audience.status === 'computing') ? 1_500 : 5_000,
  })
  const traits = useQuery({
    queryKey: ['computed-traits'],
    queryFn: () => get<{ computedTraits: ComputedTrait[] }>('/computed-traits'),
    refetchInterval: 5_000,
  })
  const destinations = useQuery({
    queryKey: ['destinations'],
    queryFn: () => get<{ destinations: Destination[] }>('/destinations'),
  })
  const destinationList = destinations.data?.destinations ?? []
  return (
    <section>
      <h1>Audiences</h1>
      <p className="muted">
        An audience is the set of profiles a definition holds; destinations get an identify call with{' '}
        <code>{'{key: true}'}</code> when a user enters and <code>{'{key: false}'}</code> when they leave.
      </p>
      <ErrorBox error={audiences.error} />
      {audiences.isPending ? (
        <Loading what="audiences" />
      ) : audiences.data?.audiences.length === 0 ? (
        <p className="card">No audiences yet.</p>
      ) : (
        <TableScroll label="Audience list">
          <table>
            <caption className="visually-hidden">Audiences</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">
                  Size
                </th>
                <th scope="col">Last sync</th>
                <th scope="col">Destinations</th>
                {canWrite && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {audiences.data?.audiences.map((audience) => (
                <AudienceRow key={audience.id} audience={audience} destinations={destinationList} />
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {canWrite && <AudienceForm destinations={destinationList} />}

      <h2 className="spaced">Computed traits</h2>
      <ErrorBox error={traits.error} />
      {traits.isPending ? (
        <Loading what="computed traits" />
      ) : traits.data?.computedTraits.length === 0 ? (
        <p className="card">No computed traits yet.</p>
      ) : (
        <TableScroll label="Computed trait list">
          <table>
            <caption className="visually-hidden">Computed traits</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Kind</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Destinations</th>
                {canWrite && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {traits.data?.computedTraits.map((trait) => (
                <tr key={trait.id}>
                  <td>{trait.name}</td>
                  <td>
                    <code>{trait.key}</code>
                  </td>
                  <td>
                    {trait.kind}
                    {trait.property ? ` of ${trait.property}` : ''}
                    {trait.withinDays ? `, last ${trait.withinDays} days` : ''}
                  </td>
                  <td>{trait.event}</td>
                  <td>
                    <StatusBadge status={trait.status} />
                  </td>
                  <td>{destinationNames(trait.destinationIds, destinationList)}</td>
                  {canWrite && (
                    <td>
                      <ItemActions
                        name={trait.name}
                        itemKey={trait.key}
                        path={`/computed-traits/${trait.id}`}
                        queryKey="computed-traits"
                        noun="computed trait"
                      />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {canWrite && <ComputedTraitForm destinations={destinationList} />}

      <h2 className="spaced">Profile lookup</h2>
      <ProfileLookup />
      <p>
        <Link to="/profiles">The Profiles page</Link> also shows a profile's calls.
      </p>
    </section>
  )
}

function destinationNames(ids: string[], destinations: Destination[]): string {
  if (ids.length === 0) return 'None'
  return ids.map((id) => destinations.find((destination) => destination.id === id)?.name ?? id).join(', ')
}

/** One audience; admins may change which destinations it syncs to (a destination added gets every member). */
function AudienceRow({ audience, destinations }: { audience: Audience; destinations: Destination[] }) {
  const canWrite = useCanWrite()
  const queryClient = useQueryClient()
  const [editing, setEditing] = useState<string[] | null>(null)
  const update = useMutation({
    mutationFn: (destinationIds: string[]) =>
      api<Audience>('PATCH', `/audiences/${audience.id}`, { destinationIds }),
    onSuccess: () => {
      setEditing(null)
      return queryClient.invalidateQueries({ queryKey: ['audiences'] })
    },
  })
  return (
    <>
      <tr>
        <td>{audience.name}</td>
        <td>
          <code>{audience.key}</code>
        </td>
        <td>
          <StatusBadge status={audience.status} />
        </td>
        <td className="num">{audience.size.toLocaleString()}</td>
        <td>{formatTime(audience.lastSyncAt)}</td>
        <td>
          <span>{destinationNames(audience.destinationIds, destinations)}</span>{' '}
          {canWrite && editing === null && (
            <button
              type="button"
              className="link"
              aria-label={`Change destinations of ${audience.name}`}
              onClick={() => setEditing(audience.destinationIds)}
            >
              Change
            </button>
          )}
        </td>
        {canWrite && (
          <td>
            <ItemActions
              name={audience.name}
              itemKey={audience.key}
              path={`/audiences/${audience.id}`}
              queryKey="audiences"
              noun="audience"
            />
          </td>
        )}
      </tr>
      {editing !== null && (
        <tr>
          <td colSpan={7}>
            <form
              aria-label={`Destinations of ${audience.name}`}
              onSubmit={(event) => {
                event.preventDefault()
                update.mutate(editing)
              }}
            >
              <DestinationChoice
                destinations={destinations}
                chosen={editing}
                onChange={setEditing}
                error={update.error}
              />
              <ErrorBox error={update.error} fields={['/destinationIds']} />
              <div className="row-actions">
                <button type="submit" disabled={update.isPending}>
                  Save destinations
                </button>
                <button type="button" className="secondary" onClick={() => setEditing(null)}>
                  Cancel
                </button>
              </div>
            </form>
          </td>
        </tr>
      )}
    </>
  )
}

function AudienceForm({ destinations }: { destinations: Destination[] }) {
  const queryClient = useQueryClient()
  const [name, setName] = useState('')
  const [draft, setDraft] = useState<Draft>(emptyDraft('all'))
  const [destinationIds, setDestinationIds] = useState<string[]>([])
  const [includeAnonymous, setIncludeAnonymous] = useState(false)
  const previewed = JSON.stringify({ definition: toDefinition(draft), includeAnonymous })
  const preview = useMutation({
    mutationFn: (body: string) =>
      api<{ size: number; sample: string[] }>('POST', '/audiences/preview', JSON.parse(body)),
  })
  // A preview of a definition since edited is not shown.
  const shown = preview.variables === previewed ? preview.data : undefined
  const save = useMutation({
    mutationFn: () =>
      api<Audience>('POST', '/audiences', {
        name,
        definition: toDefinition(draft),
        destinationIds,
        includeAnonymous,
      }),
    onSuccess: () => {
      setName('')
      setDraft(emptyDraft('all'))
      setDestinationIds([])
      preview.reset()
      return queryClient.invalidateQueries({ queryKey: ['audiences'] })
    },
  })
  const error = save.error ?? preview.error
  const submit = (event: FormEvent) => {
    event.preventDefault()
    preview.reset()
    save.mutate()
  }
  return (
    <form onSubmit={submit} className="card spaced" noValidate aria-labelledby="new-audience">
      <h2 id="new-audience">New audience</h2>
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
          {shown.sample.length > 0 && (
            <ul aria-label="Sample profiles" className="plain">
              {shown.sample.map((id) => (
                <li key={id}>
                  <code>{id}</code>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      {save.data && (
        <p role="status" className="muted">
          Audience {save.data.name} saved.
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
          Save audience
        </button>
      </div>
    </form>
  )
}
