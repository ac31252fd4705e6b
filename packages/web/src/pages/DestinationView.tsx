import {
  DELIVERY_STATUSES,
  type Delivery,
  type DeliveryStatus,
  MESSAGE_TYPES,
  type MessageType,
} from '@sluice/server/api'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { changes, keys, queries } from '../api/queries.ts'
import { DeliveryCharts } from '../components/DeliveryCharts.tsx'
import { TestEvent } from '../components/TestEvent.tsx'
import { useCanWrite } from '../session.ts'
import { CodeBlock, formatTime, Link, StatusBadge } from '../ui/content.tsx'
import { ErrorBox, FieldError } from '../ui/errors.tsx'
import { Select, TextField } from '../ui/fields.tsx'
import { ListStates, Loading } from '../ui/lists.tsx'

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

export function DestinationView({ id }: { id: string }) {
  const canWrite = useCanWrite()
  const queryClient = useQueryClient()
  const destination = useQuery({ ...queries.destination(id), refetchInterval: 5_000 })
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => changes.updateDestination(id, { enabled }),
    onSuccess: (updated) => queryClient.setQueryData(keys.destination(id), updated),
  })
  if (destination.isPending) return <Loading what="the destination" />
  if (destination.error) return <ErrorBox error={destination.error} />
  const { data } = destination
  const { stats } = data
  return (
    <section>
      <p>
        <Link to="/destinations">← Destinations</Link>
      </p>
      <h1>{data.name}</h1>
      <dl className="stats">
        {(['delivered', 'retrying', 'pending', 'failed'] as const).map((key) => (
          <div key={key}>
            <dt>{key[0]!.toUpperCase() + key.slice(1)}</dt>
            <dd>{stats[key].toLocaleString()}</dd>
          </div>
        ))}
        <div>
          <dt>Latency p50 / p95</dt>
          <dd>
            {stats.latencyP50Ms ?? '—'} / {stats.latencyP95Ms ?? '—'} ms
          </dd>
        </div>
      </dl>
      <div className="card">
        <h2>Settings</h2>
        <p>
          {data.enabled ? 'Enabled' : 'Disabled'} · signature {data.settings.sharedSecretSet ? 'on' : 'off'} ·{' '}
          {data.sourceIds.length} source{data.sourceIds.length === 1 ? '' : 's'}
        </p>
        <ul>
          {data.settings.webhooks.map((webhook) => (
            <li key={webhook.url}>
              <code>{webhook.url}</code>
              {Object.entries(webhook.headers).map(([name, value]) => (
                <span key={name} className="header-pill">
                  {/* Typed unknown: the response types drop a map's value type (headers are strings). */}
                  {name}: {String(value)}
                </span>
              ))}
            </li>
          ))}
        </ul>
        {canWrite && (
          <div className="row-actions">
            <button type="button" className="secondary" onClick={() => toggle.mutate(!data.enabled)}>
              {data.enabled ? 'Disable' : 'Enable'}
            </button>
            <TestEvent destinationId={id} />
          </div>
        )}
        <ErrorBox error={toggle.error} />
      </div>
      <DeliveryCharts destinationId={id} />
      <Deliveries destinationId={id} />
    </section>
  )
}

function Deliveries({ destinationId }: { destinationId: string }) {
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
  return (
    <div className="card">
      <h2>Deliveries</h2>
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
        empty={<p className="muted">No deliveries match.</p>}
      >
        <div className="deliveries">
          <table>
            <caption className="visually-hidden">Deliveries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Delivery</th>
                <th scope="col">Status</th>
                <th scope="col">Type</th>
                <th scope="col">Attempts</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.map((delivery) => (
                <tr key={delivery.id} className={delivery.id === selected ? 'selected' : ''}>
                  <td>
                    <button type="button" className="link" onClick={() => setSelected(delivery.id)}>
                      #{delivery.id}
                    </button>
                  </td>
                  <td>
                    <StatusBadge status={delivery.status} />
                  </td>
                  <td>{delivery.type}</td>
                  <td>{delivery.attemptCount}</td>
                  <td>{formatTime(delivery.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {current && <DeliveryDetail delivery={current} />}
        </div>
      </ListStates>
    </div>
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

function DeliveryDetail({ delivery }: { delivery: Delivery }) {
  const canWrite = useCanWrite()
  const queryClient = useQueryClient()
  const request = useQuery(queries.deliveryRequest(delivery.id))
  const replay = useMutation({
    mutationFn: () => changes.replayDelivery(delivery.id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.deliveries(delivery.destinationId) }),
  })
  const final = delivery.status === 'failed' || delivery.status === 'delivered'
  let pretty = request.data?.body ?? ''
  try {
    pretty = JSON.stringify(JSON.parse(pretty), null, 2)
  } catch {}
  return (
    <section className="delivery-detail" aria-label={`Delivery ${delivery.id}`}>
      <h3>
        Delivery #{delivery.id} <StatusBadge status={delivery.status} />
        {delivery.deadLettered && <span className="badge badge-failed">retries ran out</span>}
      </h3>
      <p className="muted">
        Message <code>{delivery.messageId}</code> · next attempt {formatTime(delivery.nextAttemptAt)}
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
                <code>{attempt.url}</code> in {attempt.latencyMs} ms, {formatTime(attempt.attemptedAt)}
              </p>
              {attempt.errorText && <p>{attempt.errorText}</p>}
              {attempt.responseExcerpt && (
                <CodeBlock label="Response excerpt">{attempt.responseExcerpt}</CodeBlock>
              )}
            </li>
          ))}
        </ol>
      )}
      <h4>Request sent</h4>
      <ErrorBox error={request.error} />
      <FieldError error={request.error} field="/id" />
      {request.data?.requests.map((sent) => (
        <div key={sent.url}>
          <p>
            POST <code>{sent.url}</code>
          </p>
          <CodeBlock label={`Headers sent to ${sent.url}`}>
            {Object.entries(sent.headers)
              .map(([name, value]) => `${name}: ${value}`)
              .join('\n')}
          </CodeBlock>
        </div>
      ))}
      {request.data && <CodeBlock label="Body sent">{pretty}</CodeBlock>}
    </section>
  )
}
