import { ENVELOPE_BYTES } from '../lib/batch.ts'
import { ValidationError } from '../lib/errors.ts'
import type { FetchLike } from '../lib/fetch.ts'

/** Options of `new Analytics(…)`. Only `writeKey` and `endpoint` are required. */
export interface AnalyticsOptions {
  /** The source's write key, sent as the HTTP Basic user name. Required. */
  writeKey: string
  /**
   * Base URL of the Tracking API, e.g. `http://localhost:8080` for Sluice or `https://api.segment.io`.
   * Batches go to `{endpoint}/v1/batch`. Required: there is no default, so data never goes to a
   * server you did not name. (Go v2: `Endpoint`.)
   */
  endpoint: string
  /** Messages per batch: a batch is sent when this many are queued; `1` sends every call at once. Default: 20. (Go v2: `Size`, `FlushAt`.) */
  flushAt?: number
  /** Longest time in ms a message waits in the queue before a flush takes it, counted from the first message of its batch. Default: 5000. (Go v2: `FlushAfter`.) */
  flushInterval?: number
  /** Largest request body in bytes; a batch is sent early rather than pass it. Default: 512000 (500 KB). */
  maxBatchBytes?: number
  /** Largest serialized message in bytes; a bigger call throws a ValidationError. Default: 32768 (32 KB). */
  maxMessageBytes?: number
  /** Most messages held in memory (queued or being sent); further calls are dropped and counted. Default: 200000. */
  maxQueueSize?: number
  /** Most bytes of messages held in memory; further calls are dropped and counted. Default: 67108864 (64 MB). */
  maxQueueBytes?: number
  /**
   * Requests in flight at once; further batches wait their turn. With `flushAt` it caps throughput
   * at `maxConcurrentRequests × flushAt` messages per round trip: raise it for high volume over a
   * slow link. Default: 16.
   */
  maxConcurrentRequests?: number
  /** Retries of a batch after a retryable failure (5xx, 408, 429, network error, timeout); 0 disables. Default: 10. */
  maxRetries?: number
  /** Backoff before the first retry, in ms; doubles with each retry (with jitter). Default: 200. */
  retryBaseDelay?: number
  /** Longest backoff between two retries, in ms. Default: 30000. */
  retryMaxDelay?: number
  /** No retry starts later than this many ms after a batch's first attempt (a long `Retry-After` included). Default: 300000 (5 min). */
  maxRetryDuration?: number
  /** Time in ms allowed for one request, answer included; then it is aborted and retried. Default: 10000. */
  timeout?: number
  /** Gzip request bodies (`Content-Encoding: gzip`); ignored where `CompressionStream` is missing. Default: false. */
  gzip?: boolean
  /**
   * The `fetch` used for requests (to add a proxy, say). It must honour `init.signal`. Default:
   * node:http(s) with a keep-alive agent where `process.getBuiltinModule` exists (Node ≥ 20.16,
   * Bun, Deno), as it needs far less CPU per request than Node's fetch; elsewhere `globalThis.fetch`.
   */
  fetch?: FetchLike
  /** Runtime logging to stderr. Default: on when the `DEBUG` environment variable names `analytics` (`analytics`, `*`, a comma list). */
  debug?: boolean
}

/** Options with every default applied. */
export interface Settings extends Required<Omit<AnalyticsOptions, 'debug' | 'fetch'>> {
  /** `{endpoint}/v1/batch` */
  url: string
  /** The caller's fetch; undefined means the transport picks (see Transport). */
  fetch: FetchLike | undefined
}

/** Items per batch the Tracking API accepts (the Tracking API's limit). */
const MAX_ITEMS_PER_BATCH = 2500

function integer(
  options: AnalyticsOptions,
  name: keyof AnalyticsOptions,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const value = options[name]
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`
    throw new ValidationError(
      `.${name}`,
      `Analytics option ${name} must be a whole number ${range}; got ${String(value)}.`,
    )
  }
  return value
}

/** `{endpoint}/v1/batch`; an endpoint given with the path already is kept as is. */
function batchUrl(endpoint: unknown): string {
  let url: URL
  try {
    url = new URL(String(endpoint))
  } catch {
    throw new ValidationError(
      '.endpoint',
      `Analytics option endpoint must be an absolute http(s) URL such as http://localhost:8080; got ${String(endpoint)}.`,
    )
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ValidationError(
      '.endpoint',
      `Analytics option endpoint must use http or https; got ${url.protocol}.`,
    )
  }
  const base = url.href.replace(/\/+$/, '')
  return base.endsWith('/v1/batch') ? base : `${base}/v1/batch`
}

/** Checks the options and fills in defaults. Throws ValidationError naming the bad option. */
export function resolveSettings(options: AnalyticsOptions): Settings {
  if (typeof options !== 'object' || options === null) {
    throw new ValidationError('.', 'new Analytics() needs an options object: { writeKey, endpoint }.')
  }
  if (typeof options.writeKey !== 'string' || options.writeKey === '') {
    throw new ValidationError(
      '.writeKey',
      'Analytics option writeKey must be the source write key (a non-empty string).',
    )
  }
  if (options.fetch !== undefined && typeof options.fetch !== 'function') {
    throw new ValidationError(
      '.fetch',
      `Analytics option fetch must be a fetch function; got ${typeof options.fetch}.`,
    )
  }
  const maxBatchBytes = integer(options, 'maxBatchBytes', 500 * 1024, ENVELOPE_BYTES + 1)
  const settings: Settings = {
    writeKey: options.writeKey,
    endpoint: options.endpoint,
    url: batchUrl(options.endpoint),
    flushAt: integer(options, 'flushAt', 20, 1, MAX_ITEMS_PER_BATCH),
    flushInterval: integer(options, 'flushInterval', 5000, 1),
    maxBatchBytes,
    maxMessageBytes: integer(options, 'maxMessageBytes', 32 * 1024, 1, maxBatchBytes - ENVELOPE_BYTES),
    maxQueueSize: integer(options, 'maxQueueSize', 200_000, 1),
    maxQueueBytes: integer(options, 'maxQueueBytes', 64 * 1024 * 1024, 1),
    maxConcurrentRequests: integer(options, 'maxConcurrentRequests', 16, 1),
    maxRetries: integer(options, 'maxRetries', 10, 0),
    retryBaseDelay: integer(options, 'retryBaseDelay', 200, 0),
    retryMaxDelay: integer(options, 'retryMaxDelay', 30_000, 0),
    maxRetryDuration: integer(options, 'maxRetryDuration', 300_000, 0),
    timeout: integer(options, 'timeout', 10_000, 1),
    gzip: options.gzip ?? false,
    fetch: options.fetch,
  }
  return settings
}
