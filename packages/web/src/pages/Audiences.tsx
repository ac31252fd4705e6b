import type { Audience, Destination } from '@sluice/server/api'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { changes, keys, queries } from '../api/queries.ts'
import { AudienceForm } from '../components/AudienceForm.tsx'
import { ComputationState } from '../components/ComputationState.tsx'
import { ComputedTraitForm } from '../components/ComputedTraitForm.tsx'
import { DestinationChoice } from '../components/DestinationChoice.tsx'
import { ItemActions } from '../components/ItemActions.tsx'
import { ProfileLookup } from '../components/ProfileLookup.tsx'
import { useCanWrite } from '../session.ts'
import { formatTime, Link } from '../ui/content.tsx'
import { ErrorBox } from '../ui/errors.tsx'
import { EmptyState, ListStates, TableScroll } from '../ui/lists.tsx'

/** Audiences and computed traits: lists, creation, preview; and a profile looked up by user id. */
export function Audiences() {
  const canWrite = useCanWrite()
  const audiences = useQuery({
    ...queries.audiences(),
    refetchInterval: (query) =>
      query.state.data?.audiences.some((audience) => audience.status === 'computing') ? 1_500 : 5_000,
  })
  const traits = useQuery({
    ...queries.computedTraits(),
    // Followed closely while one is computing, so that its status turns live without a reload.
    refetchInterval: (query) =>
      query.state.data?.computedTraits.some((trait) => trait.status === 'computing') ? 1_500 : 5_000,
  })
  const destinations = useQuery(queries.destinations())
  const destinationList = destinations.data?.destinations ?? []
  return (
    <section>
      <h1>Audiences</h1>
      <p className="muted">
        An audience is the set of profiles a definition holds; destinations get an identify call with{' '}
        <code>{'{key: true}'}</code> when a user enters and <code>{'{key: false}'}</code> when they leave.
      </p>
      <ListStates
        pending={audiences.isPending}
        error={audiences.error}
        items={audiences.data?.audiences}
        what="audiences"
        empty={
          <EmptyState title="No audiences yet.">
            {canWrite ? 'Build one below: ' : ''}e.g. everyone who completed an order in the last 30 days.
          </EmptyState>
        }
      >
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
      </ListStates>
      {canWrite && <AudienceForm destinations={destinationList} />}

      <h2 className="spaced">Computed traits</h2>
      <ListStates
        pending={traits.isPending}
        error={traits.error}
        items={traits.data?.computedTraits}
        what="computed traits"
        empty={
          <EmptyState title="No computed traits yet.">
            {canWrite ? 'Define one below: ' : ''}e.g. each user's number of orders in the last 30 days.
          </EmptyState>
        }
      >
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
                    <ComputationState status={trait.status} error={trait.error} />
                  </td>
                  <td>{destinationNames(trait.destinationIds, destinationList)}</td>
                  {canWrite && (
                    <td>
                      <ItemActions
                        name={trait.name}
                        itemKey={trait.key}
                        rename={(name) => changes.updateComputedTrait(trait.id, { name })}
                        remove={() => changes.deleteComputedTrait(trait.id)}
                        queryKey={keys.computedTraits}
                        noun="computed trait"
                      />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </ListStates>
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
    mutationFn: (destinationIds: string[]) => changes.updateAudience(audience.id, { destinationIds }),
    onSuccess: () => {
      setEditing(null)
      return queryClient.invalidateQueries({ queryKey: keys.audiences })
    },
  })
  return (
    <>
      <tr>
        <td>
          <Link to={`/audiences/${audience.id}`}>{audience.name}</Link>
        </td>
        <td>
          <code>{audience.key}</code>
        </td>
        <td>
          <ComputationState status={audience.status} error={audience.error} />
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
              rename={(name) => changes.updateAudience(audience.id, { name })}
              remove={() => changes.deleteAudience(audience.id)}
              queryKey={keys.audiences}
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
