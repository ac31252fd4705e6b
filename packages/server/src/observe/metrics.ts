/**
 * Sluice's Prometheus metrics (prom-client), served at `GET /metrics` (metrics-endpoint.ts).
 *
 * The hot paths report through the small observer interfaces below, once per request, commit or
 * delivery attempt and never per call: counts are added in one step, and the labelled children of a
 * source or destination are bound once and kept. The per-delivery metrics (attempts, outcome
 * commits) are plain number updates turned into text only at scrape time (scraped-metrics.ts), so a
 * delivery with metrics on costs a few nanoseconds more than without. With metrics off (`SLUICE_METRICS=false`) the
 * observers are no-ops and nothing is registered.
 *
 * Labels are ids only (source and destination ids, fixed reason and outcome words): never user data or
 * URLs, so every label set stays bounded by what the operator configured.
 */
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client'
import type { DeliveryOutcome, DestinationBacklog, DestinationGatedCounts } from '../domain/delivery-store.ts'
import { ScrapedCounter, ScrapedHistogram, type ScrapedMetric } from './scraped-metrics.ts'

/** Why calls were refused, as the `reason` label of `sluice_calls_rejected_total`. */
export type RejectionReason = 'invalid_message' | 'message_too_large' | 'overloaded'

/** What the ingest pipeline reports about a source's calls: counts per request, never per call. */
export interface SourceCallCounters {
  /** Calls stored and routed. */
  accepted(count: number): void
  /** Calls dropped because the source sent the same messageId within the dedupe window. */
  deduplicated(count: number): void
  /** Calls refused, with the reason. */
  rejected(reason: RejectionReason, count: number): void
  /**
   * Calls answered as usual but dropped because their user is suppressed. The pipeline's
   * suppression step reports here (one call per request, with the number it dropped).
   */
  suppressed(count: number): void
}

/** What the delivery engine reports about one destination's attempts. */
export interface DestinationCounters {
  /** One attempt: how long its requests took, and the delivery's state after it. */
  /**
   * One attempt: its duration, and the state it left its `messages` deliveries in (a batch's attempt
   * settles every message in it; default 1).
   */
  attempted(
    seconds: number,
    outcome: Pick<DeliveryOutcome, 'status' | 'deadLettered'>,
    messages?: number,
  ): void
}

/**
 * What happened to a replay's messages, as the `outcome` label of `sluice_replay_messages_total`:
 * enqueued or skipped by the replay runner, then delivered, failed or discarded (cancelled) by the engine.
 */
export type ReplayOutcome = 'enqueued' | 'skipped' | 'delivered' | 'failed' | 'cancelled'

/** A group commit: which kind, how long, how many rows it carried. */
export type CommitKind = 'ingest' | 'outcomes'

export interface Metrics {
  readonly enabled: boolean
  /** The counters of one source, bound once (call it per request; it is a map lookup). */
  source(sourceId: string): SourceCallCounters
  /** The counters of one destination, bound once. */
  destination(destinationId: string): DestinationCounters
  committed(kind: CommitKind, seconds: number, size: number): void
  /** Messages of replays to a destination, by what happened to them. */
  replayed(destinationId: string, outcome: ReplayOutcome, count: number): void
  /** The Prometheus text exposition of every metric. */
  render(): Promise<string>
  readonly contentType: string
}

export interface MetricsOptions {
  /** Reads the delivery backlog from the store at scrape time (cached for `backlogCacheMs`). */
  backlog: (now: number) => Promise<DestinationBacklog[]>
  /** How long a backlog reading serves scrapes. Default 5 s: the queries are cheap, not free. */
  backlogCacheMs?: number
  /** Reads what destinations' subscriptions and filters kept out, at scrape time (cached as the backlog). */
  gatedCounts?: () => Promise<DestinationGatedCounts[]>
  /** Every destination URL's health, from the shared store at scrape time (cached as the backlog). */
  endpointHealth?: () => Promise<UrlHealthSample[]>
  /** The in-flight ingest queue, read at scrape time. */
  ingestQueue: () => { bytes: number; messages: number }
}

/** One URL's health, as the metrics show it. */
export interface UrlHealthSample {
  destinationId: string
  /** Its place in `settings.webhooks`, from 0: the label (URLs may carry secrets, so they never are one). */
  urlIndex: number
  state: 'healthy' | 'failing' | 'disabled'
  consecutiveFailures: number
  /** Share of its requests in the last hour that succeeded; null when none was sent. */
  successRate1h: number | null
}

const URL_STATES = ['healthy', 'failing', 'disabled'] as const

const NO_OP_SOURCE: SourceCallCounters = {
  accepted() {},
  deduplicated() {},
  rejected() {},
  suppressed() {},
}
const NO_OP_DESTINATION: DestinationCounters = { attempted() {} }

/** Metrics off: every report is a no-op and `/metrics` is not served. */
export const NO_METRICS: Metrics = {
  enabled: false,
  source: () => NO_OP_SOURCE,
  destination: () => NO_OP_DESTINATION,
  committed() {},
  replayed() {},
  render: async () => '',
  contentType: 'text/plain',
}

/** Request latencies from a fast loopback receiver up to the 5 s timeout and beyond. */
const ATTEMPT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
/** An fsynced commit takes from a fraction of a millisecond to, on a struggling disk, a second. */
const COMMIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
/** Rows per commit: one request's calls up to many requests' worth. */
const GROUP_SIZE_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2500, 5000, 10000]

export function createMetrics(options: MetricsOptions): Metrics {
  const registry = new Registry()
  // Event-loop lag, heap, RSS, GC, handles: prom-client's standard process and Node.js metrics.
  collectDefaultMetrics({ register: registry })
  const registers = [registry]

  const accepted = new Counter({
    name: 'sluice_calls_accepted_total',
    help: 'Calls stored and routed, per source.',
    labelNames: ['source'] as const,
    registers,
  })
  const deduplicated = new Counter({
    name: 'sluice_calls_deduplicated_total',
    help: 'Calls dropped as repeats of a messageId the source sent within the dedupe window, per source.',
    labelNames: ['source'] as const,
    registers,
  })
  const suppressed = new Counter({
    name: 'sluice_calls_suppressed_total',
    help: 'Calls answered as usual but dropped because their user is suppressed, per source.',
    labelNames: ['source'] as const,
    registers,
  })
  const rejected = new Counter({
    name: 'sluice_calls_rejected_total',
    help: 'Calls refused, per source and reason (invalid_message, message_too_large, overloaded).',
    labelNames: ['source', 'reason'] as const,
    registers,
  })
  // Updated on every delivery attempt and outcome commit: see scraped-metrics.ts.
  const deliveries = new ScrapedCounter(
    'sluice_deliveries_total',
    'Delivery attempts by destination and the state they left the delivery in (delivered, retrying, failed, dead_lettered).',
    ['destination', 'outcome'],
  )
  const attemptDuration = new ScrapedHistogram(
    'sluice_delivery_attempt_duration_seconds',
    'How long a delivery attempt took (its requests to every open URL, together), per destination.',
    'destination',
    ATTEMPT_BUCKETS,
  )
  const commitDuration = new ScrapedHistogram(
    'sluice_store_commit_duration_seconds',
    'Store group commits: accepted calls (ingest) and delivery outcomes (outcomes).',
    'kind',
    COMMIT_BUCKETS,
  )
  const commitSize = new ScrapedHistogram(
    'sluice_store_commit_group_size',
    'Rows per store group commit: calls (ingest) or delivery outcomes (outcomes).',
    'kind',
    GROUP_SIZE_BUCKETS,
  )
  const scraped: ScrapedMetric[] = [deliveries, attemptDuration, commitDuration, commitSize]
  const commits = {
    ingest: { duration: commitDuration.child('ingest'), size: commitSize.child('ingest') },
    outcomes: { duration: commitDuration.child('outcomes'), size: commitSize.child('outcomes') },
  }

  const backlog = new CachedReader(options.backlog, options.backlogCacheMs ?? 5_000)
  new Gauge({
    name: 'sluice_delivery_backlog',
    help: 'Deliveries waiting, per destination and state (pending, retrying), from the shared store.',
    labelNames: ['destination', 'state'] as const,
    registers,
    async collect() {
      this.reset()
      for (const row of await backlog.read()) {
        this.labels(row.destinationId, 'pending').set(row.pending)
        this.labels(row.destinationId, 'retrying').set(row.retrying)
      }
    },
  })
  new Gauge({
    name: 'sluice_delivery_oldest_due_age_seconds',
    help: 'How long the longest-waiting due delivery of a destination has been due (0 when none is).',
    labelNames: ['destination'] as const,
    registers,
    async collect() {
      this.reset()
      const now = Date.now()
      for (const row of await backlog.read()) {
        const age = row.oldestDueAt === null ? 0 : Math.max(0, now - row.oldestDueAt) / 1000
        this.labels(row.destinationId).set(age)
      }
    },
  })
  const gated = new CachedReader(
    async () => (await options.gatedCounts?.()) ?? [],
    options.backlogCacheMs ?? 5_000,
  )
  new Counter({
    name: 'sluice_destination_calls_gated_total',
    help: "Calls a destination's subscription or filters kept from it, without a delivery, per destination and reason (filtered, sampled_out), from the shared store.",
    labelNames: ['destination', 'reason'] as const,
    registers,
    async collect() {
      this.reset()
      for (const row of await gated.read()) {
        this.labels(row.destinationId, 'filtered').inc(row.filtered)
        this.labels(row.destinationId, 'sampled_out').inc(row.sampledOut)
      }
    },
  })
  const replayed = new Counter({
    name: 'sluice_replay_messages_total',
    help: 'Messages of replays, per destination and outcome (enqueued, skipped as already delivered, then delivered, failed, or cancelled before they were sent), counted by this process.',
    labelNames: ['destination', 'outcome'] as const,
    registers,
  })
  const health = new CachedReader(
    async () => (await options.endpointHealth?.()) ?? [],
    options.backlogCacheMs ?? 5_000,
  )
  new Gauge({
    name: 'sluice_destination_url_state',
    help: "Each destination URL's health: 1 for its state (healthy, failing, disabled), 0 for the others, from the shared store.",
    labelNames: ['destination', 'url_index', 'state'] as const,
    registers,
    async collect() {
      this.reset()
      for (const row of await health.read())
        for (const state of URL_STATES)
          this.labels(row.destinationId, String(row.urlIndex), state).set(row.state === state ? 1 : 0)
    },
  })
  new Gauge({
    name: 'sluice_destination_url_consecutive_failures',
    help: 'Failed requests to a destination URL since its last success, from the shared store.',
    labelNames: ['destination', 'url_index'] as const,
    registers,
    async collect() {
      this.reset()
      for (const row of await health.read())
        this.labels(row.destinationId, String(row.urlIndex)).set(row.consecutiveFailures)
    },
  })
  new Gauge({
    name: 'sluice_destination_url_success_ratio_1h',
    help: 'Share of the requests to a destination URL in the last hour that got a 2xx (absent when none was sent).',
    labelNames: ['destination', 'url_index'] as const,
    registers,
    async collect() {
      this.reset()
      for (const row of await health.read())
        if (row.successRate1h !== null)
          this.labels(row.destinationId, String(row.urlIndex)).set(row.successRate1h)
    },
  })
  new Gauge({
    name: 'sluice_ingest_queue_bytes',
    help: 'Serialized bytes of accepted calls waiting for their commit (the overload limit applies to it).',
    registers,
    collect() {
      this.set(options.ingestQueue().bytes)
    },
  })
  new Gauge({
    name: 'sluice_ingest_queue_messages',
    help: 'Accepted calls waiting for their commit (the overload limit applies to it).',
    registers,
    collect() {
      this.set(options.ingestQueue().messages)
    },
  })

  /** A labelled child, shown as 0 from the start so that rates and absent-series alerts work. */
  const bound = <T extends { inc(value: number): void }>(child: T): T => {
    child.inc(0)
    return child
  }
  const sources = new Map<string, SourceCallCounters>()
  const destinations = new Map<string, DestinationCounters>()
  return {
    enabled: true,
    contentType: registry.contentType,
    source(sourceId) {
      let counters = sources.get(sourceId)
      if (!counters) {
        const acceptedChild = bound(accepted.labels(sourceId))
        const deduplicatedChild = bound(deduplicated.labels(sourceId))
        const suppressedChild = bound(suppressed.labels(sourceId))
        const rejectedChildren = {
          invalid_message: bound(rejected.labels(sourceId, 'invalid_message')),
          message_too_large: bound(rejected.labels(sourceId, 'message_too_large')),
          overloaded: bound(rejected.labels(sourceId, 'overloaded')),
        }
        counters = {
          accepted: (count) => acceptedChild.inc(count),
          deduplicated: (count) => deduplicatedChild.inc(count),
          suppressed: (count) => suppressedChild.inc(count),
          rejected: (reason, count) => rejectedChildren[reason].inc(count),
        }
        sources.set(sourceId, counters)
      }
      return counters
    },
    destination(destinationId) {
      let counters = destinations.get(destinationId)
      if (!counters) {
        const duration = attemptDuration.child(destinationId)
        const delivered = deliveries.child(destinationId, 'delivered')
        const retrying = deliveries.child(destinationId, 'retrying')
        const failed = deliveries.child(destinationId, 'failed')
        const deadLettered = deliveries.child(destinationId, 'dead_lettered')
        counters = {
          attempted(seconds, outcome, messages = 1) {
            duration.observe(seconds)
            if (outcome.deadLettered) deadLettered.value += messages
            else if (outcome.status === 'delivered') delivered.value += messages
            else if (outcome.status === 'retrying') retrying.value += messages
            else failed.value += messages
          },
        }
        destinations.set(destinationId, counters)
      }
      return counters
    },
    committed(kind, seconds, size) {
      commits[kind].duration.observe(seconds)
      commits[kind].size.observe(size)
    },
    replayed(destinationId, outcome, count) {
      if (count > 0) replayed.labels(destinationId, outcome).inc(count)
    },
    render: async () =>
      `${await registry.metrics()}\n${scraped.map((metric) => metric.render()).join('\n\n')}\n`,
  }
}

/** A store query's last answer, kept for `ttlMs`; concurrent scrapes share one query. */
class CachedReader<Row> {
  private cached: { at: number; rows: Promise<Row[]> } | undefined
  private readonly query: (now: number) => Promise<Row[]>
  private readonly ttlMs: number

  constructor(query: (now: number) => Promise<Row[]>, ttlMs: number) {
    this.query = query
    this.ttlMs = ttlMs
  }

  read(): Promise<Row[]> {
    const now = Date.now()
    if (!this.cached || now - this.cached.at >= this.ttlMs) {
      const rows = this.query(now).catch(() => {
        // A store that cannot answer leaves the gauges empty for this scrape; the next one asks again.
        this.cached = undefined
        return []
      })
      this.cached = { at: now, rows }
    }
    return this.cached.rows
  }
}
