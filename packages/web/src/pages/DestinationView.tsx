import type { Destination, EndpointHealth, SavedDestination, SecretKind } from '@sluice/server/api'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { ApiError } from '../api/client.ts'
import { changes, keys, queries } from '../api/queries.ts'
import { Deliveries } from '../components/Deliveries.tsx'
import { DeliveryCharts } from '../components/DeliveryCharts.tsx'
import { type Backfill, DestinationForm } from '../components/DestinationForm.tsx'
import { Notices } from '../components/Notices.tsx'
import { Replays } from '../components/Replays.tsx'
import { RotateSecret } from '../components/RotateSecret.tsx'
import { TestEvent } from '../components/TestEvent.tsx'
import { FILTER_ACTION_LABELS } from '../model/delivery-policy.ts'
import { attemptsByUrl } from '../model/url-attempts.ts'
import { urlHealthWords } from '../model/url-health-words.ts'
import { navigate } from '../router.ts'
import { useCanWrite } from '../session.ts'
import { CopyButton, formatTime, Link } from '../ui/content.tsx'
import { ConfirmButton } from '../ui/dialog.tsx'
import { ErrorBox } from '../ui/errors.tsx'
import { Fold } from '../ui/fold.tsx'
import { AdminOnly, Loading, TableScroll } from '../ui/lists.tsx'
import { NotFound } from './NotFound.tsx'

/**
 * Destinations just saved in this page load, with the save's warnings, the replay it started and the
 * Standard Webhooks secret the save made: told once on their page (the secret is forgotten once shown).
 */
const justSaved = new Map<
  string,
  {
    created: boolean
    warnings: NonNullable<SavedDestination['warnings']>
    backfill: Backfill | null
    standardWebhooksSecret?: string
  }
>()

/** Says on the destination's page that it was saved, with the warnings (URLs Sluice will refuse to dial). */
export function rememberSaved(
  saved: SavedDestination,
  created: boolean,
  backfill: Backfill | null = null,
): void {
  justSaved.set(saved.id, {
    created,
    warnings: saved.warnings ?? [],
    backfill,
    ...(saved.standardWebhooksSecret ? { standardWebhooksSecret: saved.standardWebhooksSecret } : {}),
  })
}

/** The save to tell of on this page, once: leaving the page and coming back shows it no more. */
function useJustSaved(id: string) {
  const [saved] = useState(() => justSaved.get(id))
  useEffect(() => {
    justSaved.delete(id)
  }, [id])
  return saved
}

/** The counters shown, in order; filtered and sampled-out calls got no delivery. */
const STAT_LABELS = [
  ['delivered', 'Delivered'],
  ['retrying', 'Retrying'],
  ['pending', 'Pending'],
  ['failed', 'Failed'],
  ['filtered', 'Filtered out'],
  ['sampledOut', 'Sampled out'],
] as const

const plural = (count: number, noun: string) => `${count.toLocaleString()} ${noun}${count === 1 ? '' : 's'}`

/** Deliveries read to count each URL's recent attempts. */
const RECENT_DELIVERIES = 200

/** `/destinations/:id` and `/destinations/:id/edit`. */
export function DestinationView({ id, edit = false }: { id: string; edit?: boolean }) {
  const destination = useQuery({ ...queries.destination(id), refetchInterval: 5_000 })
  if (destination.isPending) return <Loading what="the destination" />
  if (destination.error) return <NotFoundOr error={destination.error} />
  return edit ? (
    <EditDestination destination={destination.data} />
  ) : (
    <Overview destination={destination.data} />
  )
}

function NotFoundOr({ error }: { error: unknown }) {
  if (error instanceof ApiError && error.status === 404) {
    return <NotFound what="Destination" back={{ to: '/destinations', label: 'Back to Destinations' }} />
  }
  return (
    <section>
      <p>
        <Link to="/destinations">← Destinations</Link>
      </p>
      <ErrorBox error={error} />
    </section>
  )
}

function EditDestination({ destination }: { destination: Destination }) {
  const canWrite = useCanWrite()
  return (
    <section>
      <p>
        <Link to={`/destinations/${destination.id}`}>← {destination.name}</Link>
      </p>
      <h1>Edit {destination.name}</h1>
      {canWrite ? (
        <DestinationForm
          destination={destination}
          onSaved={(saved, backfill) => {
            rememberSaved(saved, false, backfill)
            navigate(`/destinations/${saved.id}`)
          }}
        />
      ) : (
        <AdminOnly what="Changing a destination" />
      )}
    </section>
  )
}

function Overview({ destination: data }: { destination: Destination }) {
  const canWrite = useCanWrite()
  const queryClient = useQueryClient()
  const id = data.id
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => changes.updateDestination(id, { enabled }),
    onSuccess: (updated) => queryClient.setQueryData(keys.destination(id), updated),
  })
  const saved = useJustSaved(id)
  const { stats } = data
  return (
    <section>
      <p>
        <Link to="/destinations">← Destinations</Link>
      </p>
      <div className="page-head">
        <h1>
          {data.name}{' '}
          <span className={`badge badge-${data.enabled ? 'live' : 'disabled'}`}>
            {data.enabled ? 'Enabled' : 'Disabled'}
          </span>
        </h1>
        {canWrite && (
          <div className="row-actions">
            <Link to={`/destinations/${id}/edit`} className="button">
              Edit
            </Link>
            <button type="button" className="secondary" onClick={() => toggle.mutate(!data.enabled)}>
              {data.enabled ? 'Disable' : 'Enable'}
            </button>
            <ConfirmButton
              label="Delete destination"
              title={`Delete the destination ${data.name}?`}
              confirmLabel="Delete"
              onConfirm={async () => {
                await changes.deleteDestination(id)
                queryClient.removeQueries({ queryKey: keys.destination(id) })
                await queryClient.invalidateQueries({ queryKey: keys.destinations })
                navigate('/destinations')
              }}
            >
              <p>
                Nothing more is sent to its URLs, and its deliveries and their attempts are deleted. This
                cannot be undone.
              </p>
            </ConfirmButton>
          </div>
        )}
      </div>
      <ErrorBox error={toggle.error} />
      {saved && (
        <div className="card notice" role="status">
          <h2>{saved.created ? 'Webhooks saved' : 'Changes saved'}</h2>
          <p>
            {data.enabled ? 'Enabled: calls of its sources are sent from now on.' : 'Saved, disabled.'}{' '}
            {saved.created && 'Try it with "Send test event".'}
          </p>
          {saved.backfill?.replay && (
            <p>
              Also sending the last {saved.backfill.days} days of the sources connected: see Replays below.
            </p>
          )}
          {saved.backfill?.error && (
            <p className="warning" role="alert">
              The last {saved.backfill.days} days could not be sent: {saved.backfill.error}
            </p>
          )}
          {saved.warnings.map((warning) => (
            <p key={warning.field} className="warning" role="alert">
              {warning.message}
            </p>
          ))}
          {saved.standardWebhooksSecret && (
            <>
              <p>Standard Webhooks secret, shown only now: copy it into your receivers' configuration.</p>
              <p className="key-row">
                <code className="new-token">{saved.standardWebhooksSecret}</code>{' '}
                <CopyButton text={saved.standardWebhooksSecret} label="Copy secret" />
              </p>
            </>
          )}
        </div>
      )}
      <dl className="stats">
        {STAT_LABELS.map(([key, label]) => (
          <div key={key}>
            <dt>{label}</dt>
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
      {/* Each URL's health first: what a day-to-day visit is for. The rest folds away on a phone. */}
      <UrlList destination={data} />
      <Notices destinationId={id} />
      <div className="two-columns">
        <ConnectedSources destination={data} />
        <Signature destination={data} />
      </div>
      <PolicySummary destination={data} />
      <DeliveryCharts destinationId={id} />
      <Replays destinationId={id} open={saved?.backfill?.replay ? true : undefined} />
      <Deliveries destinationId={id} />
    </section>
  )
}

/** What the destination gets, as saved: its subscription, filters, mapping, method and batching. */
function PolicySummary({ destination }: { destination: Destination }) {
  const { subscription, filters, mapping, method, batching } = destination.settings
  const summary = [
    subscription ? 'Subscription' : 'Every call',
    filters?.length ? plural(filters.length, 'filter') : null,
    mapping ? 'mapped body' : null,
    method ?? 'POST',
    batching ? 'batched' : null,
  ]
    .filter((part) => part !== null)
    .join(' · ')
  return (
    <Fold title="What it gets" summary={summary}>
      <dl className="policy-summary">
        <dt>Subscription</dt>
        <dd>{subscription ? <code>{subscription}</code> : 'Every call of its sources'}</dd>
        <dt>Filters</dt>
        <dd>
          {filters?.length
            ? filters.map((filter, index) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: filters have no identity but their position.
                <div key={index}>
                  {index + 1}. {FILTER_ACTION_LABELS[filter.action]}
                  {filter.percent !== undefined ? `: ${filter.percent}%` : ''}
                  {filter.fields ? `: ${filter.fields.join(', ')}` : ''}
                  {filter.if ? (
                    <>
                      {' '}
                      if <code>{filter.if}</code>
                    </>
                  ) : (
                    ' (every call)'
                  )}
                </div>
              ))
            : 'None'}
        </dd>
        <dt>Body</dt>
        <dd>
          {mapping ? 'Mapped (see Edit)' : 'The documented shape'}, sent with {method ?? 'POST'}
        </dd>
        <dt>Batching</dt>
        <dd>
          {batching
            ? `Up to ${plural(batching.maxEvents, 'message')} or ${batching.maxBytes.toLocaleString()} bytes per request, waiting at most ${batching.maxWaitMs.toLocaleString()} ms`
            : 'One message per request'}
        </dd>
      </dl>
    </Fold>
  )
}

/** How requests are signed, the secrets' rotations, "Rotate secret" and "Send test event". */
function Signature({ destination }: { destination: Destination }) {
  const canWrite = useCanWrite()
  const { settings, id } = destination
  const xSignature = settings.sharedSecretSet && settings.signing.xSignature
  const standardWebhooks = settings.standardWebhooksSecretSet && settings.signing.standardWebhooks
  const kinds: SecretKind[] = []
  if (settings.standardWebhooksSecretSet) kinds.push('standardWebhooks')
  if (settings.sharedSecretSet) kinds.push('sharedSecret')
  const rotations = useQuery({ ...queries.rotations(id), enabled: kinds.length > 0 })
  const latest = rotations.data?.rotations.slice(0, 3) ?? []
  const summary =
    [standardWebhooks ? 'Standard Webhooks' : null, xSignature ? 'X-Signature' : null]
      .filter((part) => part !== null)
      .join(' and ') || 'Unsigned'
  return (
    <Fold title="Signature" summary={summary}>
      {standardWebhooks && (
        <p>
          Standard Webhooks: each request carries webhook-id, webhook-timestamp and webhook-signature
          (HMAC-SHA256 with the whsec_ secret).
        </p>
      )}
      {xSignature && <p>Each request carries X-Signature (HMAC-SHA1 of the body with the shared secret).</p>}
      {!standardWebhooks && !xSignature && <p>Unsigned: no signature is sent.</p>}
      {latest.length > 0 && (
        <ul className="link-list" aria-label="Secret rotations">
          {latest.map((rotation) => (
            <li key={rotation.rotatedAt}>
              {rotation.kind === 'standardWebhooks' ? 'Standard Webhooks secret' : 'Shared secret'} rotated{' '}
              {formatTime(rotation.rotatedAt)}
              {Date.parse(rotation.graceEndsAt) > Date.now()
                ? `; the old one signs too until ${formatTime(rotation.graceEndsAt)}`
                : ''}
            </li>
          ))}
        </ul>
      )}
      {canWrite && kinds.length > 0 && (
        <p>
          <RotateSecret destinationId={id} kinds={kinds} />
        </p>
      )}
      {canWrite && <TestEvent destinationId={id} />}
    </Fold>
  )
}

function ConnectedSources({ destination }: { destination: Destination }) {
  const canWrite = useCanWrite()
  const sources = useQuery(queries.sources())
  const connected = (sources.data?.sources ?? []).filter((source) =>
    destination.sourceIds.includes(source.id),
  )
  return (
    <Fold
      title="Connected sources"
      headingId="connected-sources"
      summary={sources.isPending ? undefined : connected.length ? plural(connected.length, 'source') : 'None'}
    >
      {sources.isPending ? (
        <Loading what="sources" />
      ) : connected.length === 0 ? (
        <p className="muted">
          No source is connected: nothing is sent here yet.{' '}
          {canWrite && <Link to={`/destinations/${destination.id}/edit`}>Choose sources</Link>}
        </p>
      ) : (
        <ul aria-labelledby="connected-sources" className="link-list">
          {connected.map((source) => (
            <li key={source.id}>
              <Link to={`/sources/${source.id}`}>{source.name}</Link>
              {!source.enabled && <span className="muted"> (disabled)</span>}
            </li>
          ))}
        </ul>
      )}
    </Fold>
  )
}

const HEALTH_LABELS: Record<EndpointHealth['state'], string> = {
  healthy: 'Healthy',
  failing: 'Failing',
  disabled: 'Disabled',
}

function UrlList({ destination }: { destination: Destination }) {
  const recent = useQuery({
    ...queries.deliveries(destination.id, { limit: RECENT_DELIVERIES }),
    refetchInterval: 5_000,
  })
  const byUrl = attemptsByUrl(recent.data?.deliveries ?? [])
  const canWrite = useCanWrite()
  const queryClient = useQueryClient()
  const enable = useMutation({
    mutationFn: (index: number) => changes.enableUrl(destination.id, index),
    onSuccess: (updated) => queryClient.setQueryData(keys.destination(destination.id), updated),
  })
  return (
    <div className="card">
      <h2>URLs</h2>
      <p className="muted">Attempts and Failed count the last {RECENT_DELIVERIES} deliveries.</p>
      <details className="explain">
        <summary>What Healthy, Failing and Disabled mean</summary>
        <p className="muted">
          The state comes from every attempt Sluice recorded. A URL that fails while another one answers is
          Failing although its deliveries count as delivered. A Disabled URL (it answered 410 Gone, or kept
          failing for the auto-disable period) gets nothing until it is enabled; while every URL is disabled,
          deliveries wait.
        </p>
      </details>
      <TableScroll label="URLs and their recent attempts">
        <table className="url-table">
          <caption className="visually-hidden">URLs and their recent attempts</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">State</th>
              <th scope="col" className="num">
                Attempts
              </th>
              <th scope="col" className="num">
                Failed
              </th>
              <th scope="col">Last error</th>
            </tr>
          </thead>
          <tbody>
            {destination.settings.webhooks.map((webhook, index) => {
              const counts = byUrl.get(webhook.url)
              const state = destination.health[index]
              const failing = counts !== undefined && counts.lastError !== null
              return (
                <tr key={webhook.url} className={failing ? 'url-failing' : undefined}>
                  <td>
                    <span className="muted">URL {index + 1}</span> <code className="url">{webhook.url}</code>
                    {Object.entries(webhook.headers).map(([name, value]) => (
                      <span key={name} className="header-pill">
                        {/* Typed unknown: the response types drop a map's value type (headers are strings). */}
                        {name}: {String(value)}
                      </span>
                    ))}
                  </td>
                  <td>
                    {state ? (
                      <>
                        <span className={`badge badge-health-${state.state}`}>
                          {HEALTH_LABELS[state.state]}
                        </span>
                        {state.state === 'disabled' && (
                          <p className="url-disabled">
                            {state.disabledReason}{' '}
                            {state.disabledAt && (
                              <span className="muted">Since {formatTime(state.disabledAt)}.</span>
                            )}
                          </p>
                        )}
                        <p className="muted url-health">{urlHealthWords(state)}</p>
                        {state.state === 'disabled' && canWrite && (
                          <button
                            type="button"
                            className="secondary"
                            disabled={enable.isPending}
                            onClick={() => enable.mutate(index)}
                            aria-label={`Enable URL ${index + 1}`}
                          >
                            Enable
                          </button>
                        )}
                      </>
                    ) : counts === undefined ? (
                      <span className="muted">No attempts yet</span>
                    ) : failing ? (
                      <span className="badge badge-failed">Last attempt failed</span>
                    ) : (
                      <span className="badge badge-delivered">Last attempt succeeded</span>
                    )}
                  </td>
                  <td className="num" data-label="Attempts">
                    {(counts?.attempts ?? 0).toLocaleString()}
                  </td>
                  <td className="num" data-label="Failed">
                    {(counts?.failures ?? 0).toLocaleString()}
                  </td>
                  <td
                    data-label="Last error"
                    className={(state?.lastError ?? counts?.lastError) ? undefined : 'no-error'}
                  >
                    {(state?.lastError ?? counts?.lastError) ? (
                      <>
                        <span className="error-text">{state?.lastError ?? counts?.lastError}</span>
                        {(state?.lastFailureAt ?? counts?.lastAt) && (
                          <span className="muted">
                            {' '}
                            · {formatTime(state?.lastFailureAt ?? counts?.lastAt ?? '')}
                          </span>
                        )}
                      </>
                    ) : (
                      <span className="muted">—</span>
                    )}
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      </TableScroll>
      <ErrorBox error={recent.error ?? enable.error} />
    </div>
  )
}
