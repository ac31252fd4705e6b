import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type FormEvent, useState } from 'react'
import { api, type Delivery, type DeliveryRequest, type Destination, get } from '../api.ts'
import { useCanWrite } from '../session.ts'
import { CodeBlock, ErrorBox, FieldError, formatTime, Link, Loading, StatusBadge, TextField } from '../ui.tsx'
import { DeliveryCharts } from './DeliveryChart.tsx'
import { TestEvent } from './TestEvent.tsx'

const STATUSES = ['', 'pending', 'retrying', 'delivered', 'failed']
const TYPES = ['', 'track', 'identify', 'page', 'screen', 'group', 'alias']

interface Filters {
  status: string
  type: string
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
  const destination = useQuery({
    queryKey: ['destinations', id],
    queryFn: () => get<Destination>(`/destinations/${id}`),
    refetchInterval: 5_000,
  })
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => api<Destination>('PATCH', `/destinations/${id}`, { enabled }),
    onSuccess: (updated) => queryClient.setQueryData(['destinations', id], updated),
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
                  {name}: {value}
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
  const query = new URLSearchParams({ limit: '50' })
  if (filters.status) query.set('status', filters.status)
  if (filters.type) query.set('type', filters.type)
  if (filters.userId.trim()) query.set('userId', filters.userId.trim())
  const since = isoFromLocal(filters.since)
  const until = isoFromLocal(filters.until)
  if (since) query.set('since', since)
  if (until) query.set('until', until)
  const deliveries = useQuery({
    queryKey: ['deliveries', destinationId, query.toString()],
    queryFn: () => get<{ deliveries: Delivery[] }>(`/destinations/${destinationId}/deliveries?${query}`),
    refetchInterval: 3_000,
  })
  const replayAll = useMutation({
    mutationFn: () => {
      const at = isoFromLocal(replaySince)
      return api<{ replayed: number }>(
        'POST',
        `/destinations/${destinationId}/replay?status=failed${at ? `&since=${encodeURIComponent(at)}` : ''}`,
      )
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['deliveries', destinationId] }),
  })
  const set = (key: keyof Filters) => (value: string) => setFilters({ ...filters, [key]: value })
  const list = deliveries.data?.deliveries ?? []
  const current = list.find((delivery) => delivery.id === selected)
  return (
    <div className="card">
      <h2>Deliveries</h2>
      <form className="filters" aria-label="Filter deliveries" onSubmit={(event) => event.preventDefault()}>
        <Select label="Status" value={filters.status} options={STATUSES} onChange={set('status')} />
        <Select label="Type" value={filters.type} options={TYPES} onChange={set('type')} />
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
      {deliveries.isPending ? (
        <Loading what="deliveries" />
      ) : list.length === 0 ? (
        <p className="muted">No deliveries match.</p>
      ) : (
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
      )}
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

function Select(props: {
  label: string
  value: string
  options: string[]
  onChange: (value: string) => void
}) {
  return (
    <div className="field">
      <label>
        {props.label}
        <select value={props.value} onChange={(event) => props.onChange(event.target.value)}>
          {props.options.map((option) => (
            <option key={option} value={option}>
              {option || 'Any'}
            </option>
          ))}
        </select>
      </label>
    </div>
  )
}

function DeliveryDetail({ delivery }: { delivery: Delivery }) {
  const canWrite = useCanWrite()
  const queryClient = useQueryClient()
  const request = useQuery({
    queryKey: ['delivery-request', delivery.id],
    queryFn: () => get<DeliveryRequest>(`/deliveries/${delivery.id}/request`),
  })
  const replay = useMutation({
    mutationFn: () => api<Delivery>('POST', `/deliveries/${delivery.id}/replay`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['deliveries', delivery.destinationId] }),
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
