import {
  type CreateRegulationBody,
  REGULATION_TYPES,
  type RegulationStatus,
  type RegulationType,
  type Source,
  type Suppression,
} from '@sluice/server/api'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useId, useState } from 'react'
import { errorConcerns } from '../api/client.ts'
import { changes, keys, queries } from '../api/queries.ts'
import { useCanWrite } from '../session.ts'
import { formatTime, StatusBadge } from '../ui/content.tsx'
import { ConfirmButton } from '../ui/dialog.tsx'
import { ErrorBox, FieldError } from '../ui/errors.tsx'
import { CheckboxList, SelectField } from '../ui/fields.tsx'
import { EmptyState, ListStates, TableScroll } from '../ui/lists.tsx'

const TYPE_LABELS: Record<RegulationType, string> = {
  DELETE_ONLY: 'Delete: erase stored calls and notify destinations',
  SUPPRESS_ONLY: 'Suppress: drop their later calls',
  SUPPRESS_WITH_DELETE: 'Suppress and delete',
  UNSUPPRESS: 'Unsuppress: accept their calls again',
}

/** The request types as the list shows them. */
const TYPE_NAMES: Record<RegulationType, string> = {
  DELETE_ONLY: 'Delete',
  SUPPRESS_ONLY: 'Suppress',
  SUPPRESS_WITH_DELETE: 'Suppress and delete',
  UNSUPPRESS: 'Unsuppress',
}

const STATUS_NAMES: Record<RegulationStatus, string> = {
  INITIALIZED: 'Queued',
  RUNNING: 'Running',
  FINISHED: 'Finished',
  PARTIAL_SUCCESS: 'Partly failed',
  FAILED: 'Failed',
}

/** Types that erase stored data: asked again in a dialog before they are sent. */
const ERASING: ReadonlySet<RegulationType> = new Set(['DELETE_ONLY', 'SUPPRESS_WITH_DELETE'])

const FINAL: ReadonlySet<RegulationStatus> = new Set(['FINISHED', 'PARTIAL_SUCCESS', 'FAILED'])

/** Deletion and suppression requests, followed per destination, and the users suppressed now. */
export function Privacy() {
  const canWrite = useCanWrite()
  const sources = useQuery(queries.sources())
  const destinations = useQuery(queries.destinations())
  const regulations = useQuery({
    ...queries.regulations(),
    // Follow requests until every one is final.
    refetchInterval: (query) =>
      query.state.data?.regulations.some((regulation) => !FINAL.has(regulation.status)) ? 1_500 : 10_000,
  })
  const suppressions = useQuery({ ...queries.suppressions(), refetchInterval: 10_000 })
  const sourceName = (id: string) => sources.data?.sources.find((source) => source.id === id)?.name ?? id
  const destinationName = (id: string) =>
    destinations.data?.destinations.find((destination) => destination.id === id)?.name ?? id

  return (
    <section>
      <h1>Privacy</h1>
      <p className="muted">
        Delete a user's stored calls (and tell destinations), or suppress their later calls: suppressed calls
        are acknowledged but never stored or delivered.
      </p>
      {canWrite && <RequestForm sources={sources.data?.sources ?? []} />}

      <h2>Requests</h2>
      <ListStates
        pending={regulations.isPending}
        error={regulations.error}
        items={regulations.data?.regulations}
        what="requests"
        empty={
          <EmptyState title="No requests yet.">
            When someone asks to be forgotten, enter their user id above: their stored calls are erased and
            every destination that got them is told.
          </EmptyState>
        }
      >
        <TableScroll label="Requests">
          <table>
            <caption className="visually-hidden">Requests, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Type</th>
                <th scope="col">Users</th>
                <th scope="col">Sources</th>
                <th scope="col">Status</th>
                <th scope="col">Destinations (delivered / failed)</th>
                <th scope="col" className="num">
                  Erased calls
                </th>
              </tr>
            </thead>
            <tbody>
              {regulations.data?.regulations.map((regulation) => (
                <tr key={regulation.id} data-regulation={regulation.id}>
                  <td>{formatTime(regulation.createdAt)}</td>
                  <td>{TYPE_NAMES[regulation.regulationType]}</td>
                  <td>{regulation.subjectIds.join(', ')}</td>
                  <td>{regulation.sourceIds ? regulation.sourceIds.map(sourceName).join(', ') : 'All'}</td>
                  <td>
                    <StatusBadge status={regulation.status} label={STATUS_NAMES[regulation.status]} />
                  </td>
                  <td>
                    {regulation.destinations.length === 0 ? (
                      <span className="muted">None</span>
                    ) : (
                      <ul className="plain">
                        {regulation.destinations.map((destination) => (
                          <li key={destination.destinationId}>
                            {destinationName(destination.destinationId)}: {destination.delivered} /{' '}
                            {destination.failed}
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                  <td className="num">{regulation.erased.messages.toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </ListStates>

      <h2 className="spaced">Suppressed users</h2>
      <ListStates
        pending={suppressions.isPending}
        error={suppressions.error}
        items={suppressions.data?.suppressions}
        what="suppressions"
        empty={<EmptyState title="No user is suppressed.">A suppression request above adds one.</EmptyState>}
      >
        <TableScroll label="Suppressed user list">
          <table>
            <caption className="visually-hidden">Suppressed users</caption>
            <thead>
              <tr>
                <th scope="col">User ID</th>
                <th scope="col">Sources</th>
                <th scope="col">Since</th>
                {canWrite && (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {suppressions.data?.suppressions.map((suppression) => (
                <tr key={`${suppression.userId} ${suppression.sourceId}`}>
                  <td>{suppression.userId}</td>
                  <td>{suppression.sourceId === null ? 'All' : sourceName(suppression.sourceId)}</td>
                  <td>{formatTime(suppression.createdAt)}</td>
                  {canWrite && (
                    <td>
                      <LiftButton suppression={suppression} />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </ListStates>
    </section>
  )
}

function useCreateRegulation() {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (body: CreateRegulationBody) => changes.createRegulation(body),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: keys.regulations }),
        queryClient.invalidateQueries({ queryKey: keys.suppressions }),
      ]),
  })
}

function RequestForm({ sources }: { sources: Source[] }) {
  const create = useCreateRegulation()
  const [type, setType] = useState<RegulationType>('DELETE_ONLY')
  const [userIds, setUserIds] = useState('')
  const [sourceIds, setSourceIds] = useState<string[]>([])
  const id = useId()
  const error = create.error
  const usersFailed = errorConcerns(error, '/subjectIds')
  const subjectIds = userIds
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
  const body: CreateRegulationBody = {
    regulationType: type,
    subjectIds,
    ...(sourceIds.length > 0 ? { sourceIds } : {}),
  }
  const send = () => create.mutateAsync(body).then(() => setUserIds(''))
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (!ERASING.has(type)) void send().catch(() => {})
  }
  return (
    <form onSubmit={submit} className="card" noValidate aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>New request</h2>
      <SelectField
        label="Request type"
        value={type}
        options={REGULATION_TYPES}
        optionLabel={(value) => TYPE_LABELS[value]}
        onChange={setType}
        error={error}
        field="/regulationType"
      />
      <div className="field">
        <label htmlFor={`${id}-users`}>User IDs</label>
        <textarea
          id={`${id}-users`}
          rows={4}
          value={userIds}
          aria-invalid={usersFailed || undefined}
          aria-describedby={`${id}-users-hint${usersFailed ? ` ${id}-users-error` : ''}`}
          onChange={(event) => setUserIds(event.target.value)}
        />
        <p className="hint" id={`${id}-users-hint`}>
          One per line: the calls' userId.
        </p>
        <FieldError error={error} field="/subjectIds" id={`${id}-users-error`} label="User IDs" />
      </div>
      <CheckboxList
        legend="Sources"
        items={sources}
        chosen={sourceIds}
        onChange={setSourceIds}
        error={error}
        field="/sourceIds"
      >
        <p className="hint">None checked: every source (for suppressions, future sources too).</p>
      </CheckboxList>
      <ErrorBox error={error} fields={['/regulationType', '/subjectIds', '/sourceIds']} />
      {create.data && (
        <p role="status" className="muted">
          Request {create.data.id} recorded.
        </p>
      )}
      {ERASING.has(type) ? (
        <ConfirmButton
          label="Create request"
          className=""
          title={`Erase the data of ${subjectIds.length === 1 ? subjectIds[0] : `${subjectIds.length} users`}?`}
          confirmLabel="Erase data"
          // The API's refusal is shown at the field it is about, once the dialog has closed.
          onConfirm={() => send().catch(() => {})}
        >
          <p>
            Their stored calls and profiles are erased
            {sourceIds.length > 0 ? ' in the sources chosen' : ' in every source'}, and each destination that
            got their calls is sent a delete notification. This cannot be undone.
          </p>
        </ConfirmButton>
      ) : (
        <button type="submit" disabled={create.isPending}>
          Create request
        </button>
      )}
    </form>
  )
}

/** Lifts one suppression: an UNSUPPRESS for that user, in the same source scope. */
function LiftButton({ suppression }: { suppression: Suppression }) {
  const lift = useCreateRegulation()
  return (
    <>
      <button
        type="button"
        className="secondary"
        disabled={lift.isPending}
        aria-label={`Lift suppression of ${suppression.userId}`}
        onClick={() =>
          lift.mutate({
            regulationType: 'UNSUPPRESS',
            subjectIds: [suppression.userId],
            ...(suppression.sourceId === null ? {} : { sourceIds: [suppression.sourceId] }),
          })
        }
      >
        Lift
      </button>
      <ErrorBox error={lift.error} />
    </>
  )
}
