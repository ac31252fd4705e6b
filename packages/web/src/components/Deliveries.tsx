/**
 * A destination's deliveries: filters, the list (newest first, with each call's user and event), replay
 * of failed ones, and one delivery's detail below the list (its attempts, the exact request sent).
 */
import {
  DELIVERY_STATUSES,
  type Delivery,
  type DeliveryStatus,
  MESSAGE_TYPES,
  type MessageType,
} from '@sluice/server/api'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useEffect, useRef, useState } from 'react'
import { changes, keys, queries } from '../api/queries.ts'
import { useCanWrite } from '../session.ts'
import { CodeBlock, formatTime, StatusBadge } from '../ui/content.tsx'
import { ErrorBox, FieldError } from '../ui/errors.tsx'
import { Select, TextField } from '../ui/fields.tsx'
import { Fold } from '../ui/fold.tsx'
import { EmptyState, ListStates, TableScroll } from '../ui/lists.tsx'

/** Filter choices; the empty one is "Any". */
const STATUSES = ['', ...DELIVERY_STATUSES] as const
/** Track, the commonest call, first. */
const TYPES = ['', 'track', ...MESSAGE_TYPES.filter((type) => type !== 'track')] as const
const anyWhenEmpty = (option: string) => option || 'Any'

interface Filters {
  status: DeliveryStatus | ''
  type: MessageType | ''
  userId: string
  since: string
  until: string
}

/** A `datetime-local` value (local time) as ISO 8601 UTC, or undefined when empty. */
function isoFromLocal(value: string): string | undefined {
  return value ? new Date(value).toISOString() : undefined
}

export function Deliveries({ destinationId }: { destinationId: string }) {
  const canWrite = useCanWrite()
  const queryClient = useQueryClient()
  const [filters, setFilters] = useState<Filters>({ status: '', type: '', userId: '', since: '', until: '' })
  const [selected, setSelected] = useState<number | null>(null)
  const [replaySince, setReplaySince] = useState('')
  const deliveries = useQuery({
    ...queries.deliveries(destinationId, {
      limit: 50,
      status: filters.status || undefined,
      type: filters.type || undefined,
      userId: filters.userId.trim() || undefined,
      since: isoFromLocal(filters.since),
      until: isoFromLocal(filters.until),
    }),
    refetchInterval: 3_000,
  })
  const replayAll = useMutation({
    mutationFn: () =>
      changes.replayDeliveries(destinationId, { status: 'failed', since: isoFromLocal(replaySince) }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.deliveries(destinationId) }),
  })
  const set =
    <Key extends keyof Filters>(key: Key) =>
    (value: Filters[Key]) =>
      setFilters({ ...filters, [key]: value })
  const list = deliveries.data?.deliveries ?? []
  const current = list.find((delivery) => delivery.id === selected)
  const filtered = Object.values(filters).some((value) => value !== '')
  const summary = deliveries.isPending
    ? undefined
    : list.length === 0
      ? filtered
        ? 'None match the filters'
        : 'None yet'
      : `Latest ${list.length.toLocaleString()}${filtered ? ', filtered' : ''}`
  return (
    <Fold title="Deliveries" summary={summary}>
      <form className="filters" aria-label="Filter deliveries" onSubmit={(event) => event.preventDefault()}>
        <Select
          label="Status"
          value={filters.status}
          options={STATUSES}
          optionLabel={anyWhenEmpty}
          onChange={set('status')}
        />
        <Select
          label="Type"
          value={filters.type}
          options={TYPES}
          optionLabel={anyWhenEmpty}
          onChange={set('type')}
        />
        <TextField
          label="User ID"
          value={filters.userId}
          onChange={set('userId')}
          error={deliveries.error}
          field="/userId"
        />
        <TextField
          label="From"
          type="datetime-local"
          value={filters.since}
          onChange={set('since')}
          error={deliveries.error}
          field="/since"
        />
        <TextField
          label="To"
          type="datetime-local"
          value={filters.until}
          onChange={set('until')}
          error={deliveries.error}
          field="/until"
        />
      </form>
      <ErrorBox error={deliveries.error} fields={['/userId', '/since', '/until']} />
      {canWrite && (
        <ReplayFailed
          since={replaySince}
          setSince={setReplaySince}
          onReplay={() => replayAll.mutate()}
          pending={replayAll.isPending}
          error={replayAll.error}
          replayed={replayAll.data?.replayed}
        />
      )}
      {/* Its error is shown above, with the filters it may be about. */}
      <ListStates
        pending={deliveries.isPending}
        error={null}
        items={list}
        what="deliveries"
        empty={
          <EmptyState title={filtered ? 'No delivery matches these filters.' : 'No deliveries yet.'}>
            {filtered
              ? 'Clear a filter to see more.'
              : 'Calls of the connected sources show here as they are sent. Send a test call from a source page, or "Send test event" above.'}
          </EmptyState>
        }
      >
        <TableScroll label="Deliveries list">
          <table className="deliveries-table">
            <caption className="visually-hidden">Deliveries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Delivery</th>
                <th scope="col">Status</th>
                <th scope="col">Type</th>
                <th scope="col">User ID</th>
                <th scope="col">Event</th>
                <th scope="col" className="num">
                  Attempts
                </th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.map((delivery) => (
                <tr key={delivery.id} className={delivery.id === selected ? 'selected' : ''}>
                  <td>
                    <button
                      type="button"
                      className="link"
                      aria-expanded={delivery.id === selected}
                      onClick={() => setSelected(delivery.id === selected ? null : delivery.id)}
                    >
                      #{delivery.id}
                    </button>
                  </td>
                  <td>
                    <StatusBadge status={delivery.status} />
                  </td>
                  <td>{delivery.type}</td>
                  <td className="cell-id">
                    <Who delivery={delivery} />
                  </td>
                  <td>{delivery.event ?? <span className="muted">—</span>}</td>
                  <td className="num">{delivery.attemptCount}</td>
                  <td className="nowrap">{formatTime(delivery.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
        {current && <DeliveryDetail delivery={current} onClose={() => setSelected(null)} />}
      </ListStates>
    </Fold>
  )
}

function ReplayFailed(props: {
  since: string
  setSince: (value: string) => void
  onReplay: () => void
  pending: boolean
  error: unknown
  replayed: number | undefined
}) {
  const submit = (event: FormEvent) => {
    event.preventDefault()
    props.onReplay()
  }
  return (
    <form className="inline-form" onSubmit={submit} aria-label="Replay failed deliveries">
      <TextField
        label="Replay failed deliveries created since (empty: all)"
        type="datetime-local"
        value={props.since}
        onChange={props.setSince}
        error={props.error}
        field="/since"
      />
      <button type="submit" disabled={props.pending}>
        Replay failed
      </button>
      {props.replayed !== undefined && <p role="status">{props.replayed} deliveries scheduled again.</p>}
      <ErrorBox error={props.error} fields={['/since']} />
    </form>
  )
}

function DeliveryDetail({ delivery, onClose }: { delivery: Delivery; onClose: () => void }) {
  const canWrite = useCanWrite()
  const queryClient = useQueryClient()
  const request = useQuery(queries.deliveryRequest(delivery.id))
  const replay = useMutation({
    mutationFn: () => changes.replayDelivery(delivery.id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.deliveries(delivery.destinationId) }),
  })
  const heading = useRef<HTMLHeadingElement>(null)
  // Opened below the list: bring it into view, and the keyboard with it.
  // biome-ignore lint/correctness/useExhaustiveDependencies: only when another delivery is opened.
  useEffect(() => {
    heading.current?.scrollIntoView({ block: 'nearest' })
    heading.current?.focus()
  }, [delivery.id])
  const final = delivery.status === 'failed' || delivery.status === 'delivered'
  let pretty = request.data?.body ?? ''
  try {
    pretty = JSON.stringify(JSON.parse(pretty), null, 2)
  } catch {}
  return (
    <section className="delivery-detail" aria-label={`Delivery ${delivery.id}`}>
      <div className="page-head">
        <h3 ref={heading} tabIndex={-1}>
          Delivery #{delivery.id} <StatusBadge status={delivery.status} />
          {delivery.deadLettered && <span className="badge badge-failed">retries ran out</span>}
        </h3>
        <button type="button" className="secondary" onClick={onClose}>
          Close
        </button>
      </div>
      <p className="muted">
        {delivery.type}
        {delivery.event ? ` "${delivery.event}"` : ''}
        {delivery.userId
          ? ` of user ${delivery.userId}`
          : delivery.anonymousId
            ? ` of anonymous visitor ${delivery.anonymousId}`
            : ''}{' '}
        · message <code>{delivery.messageId}</code>
        {!final && delivery.nextAttemptAt && <> · next attempt {formatTime(delivery.nextAttemptAt)}</>}
      </p>
      {canWrite && (
        <p>
          <button type="button" disabled={!final || replay.isPending} onClick={() => replay.mutate()}>
            Replay this delivery
          </button>{' '}
          {!final && <span className="muted">(already scheduled)</span>}
          {replay.isSuccess && <span role="status">Scheduled again.</span>}
        </p>
      )}
      <ErrorBox error={replay.error} />
      <div className="detail-columns">
        <div>
          <h4>Attempts</h4>
          {delivery.attempts.length === 0 ? (
            <p className="muted">Not attempted yet.</p>
          ) : (
            <ol className="attempts">
              {delivery.attempts.map((attempt) => (
                <li
                  key={`${attempt.attemptedAt} ${attempt.url}`}
                  className={attempt.statusCode !== null && attempt.statusCode < 300 ? 'ok' : 'bad'}
                >
                  <p>
                    <strong>{attempt.statusCode ?? attempt.errorKind ?? 'no answer'}</strong> from{' '}
                    <code className="url">{attempt.url}</code> in {attempt.latencyMs} ms,{' '}
                    {formatTime(attempt.attemptedAt)}
                  </p>
                  {attempt.errorText && <p>{attempt.errorText}</p>}
                  {attempt.responseExcerpt && (
                    <CodeBlock label="Response excerpt">{attempt.responseExcerpt}</CodeBlock>
                  )}
                </li>
              ))}
            </ol>
          )}
        </div>
        <div>
          <h4>Request sent</h4>
          <ErrorBox error={request.error} />
          <FieldError error={request.error} field="/id" />
          {request.data?.requests.map((sent) => (
            <div key={sent.url}>
              <p>
                {request.data?.method ?? 'POST'} <code className="url">{sent.url}</code>
              </p>
              <CodeBlock label={`Headers sent to ${sent.url}`}>
                {Object.entries(sent.headers)
                  .map(([name, value]) => `${name}: ${value}`)
                  .join('\n')}
              </CodeBlock>
            </div>
          ))}
          {request.data && <CodeBlock label="Body sent">{pretty}</CodeBlock>}
        </div>
      </div>
    </section>
  )
}

/**
 * Whose call it is: the userId, else the anonymousId marked as such (most of a website's calls have
 * only that), else a dash.
 */
function Who({ delivery }: { delivery: Delivery }) {
  if (delivery.userId !== null) return <>{delivery.userId}</>
  if (delivery.anonymousId !== null)
    return (
      <>
        <span className="muted id-kind">anonymous </span>
        {delivery.anonymousId}
      </>
    )
  return <span className="muted">—</span>
}
