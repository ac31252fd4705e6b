/**
 * The retry policy (SPEC §4), in one place:
 *
 * - 2xx: delivered.
 * - Retried: no response within the request timeout (5 s), 5xx, 408, 429, connection and DNS errors.
 * - Final (not retried): other 4xx, 3xx (redirects are never followed), TLS failures, SSRF refusals,
 *   a URL or request Sluice cannot send.
 * - Backoff: exponential with full jitter, floored at `baseDelayMs` so a retry never comes back at
 *   once: the n-th retry waits uniformly between `baseDelayMs` and min(`maxDelayMs`, base × 2^n).
 *   Jitter spreads the retries of many messages that failed together (an endpoint outage).
 * - `Retry-After` (seconds or HTTP date) is honoured as a minimum wait, capped at `retryAfterCapMs`
 *   so a receiver cannot park a delivery beyond the window.
 * - Window: retries stop `windowMs` (4 h) after the first attempt. A retry that would fall after the
 *   window's end is made at the end instead (one last chance); a failure at or after the end
 *   dead-letters the delivery, which can then be replayed.
 *
 * The numbers are settings so tests (and operators) can shrink them.
 */

export interface RetrySettings {
  /** Wait before the first retry, and the least any retry waits. */
  baseDelayMs: number
  /** Longest wait between two attempts. */
  maxDelayMs: number
  /** Retries stop this long after the first attempt; the delivery is then dead-lettered. */
  windowMs: number
  /** A receiver's `Retry-After` is honoured up to this long. */
  retryAfterCapMs: number
  /** A request without response headers after this long is abandoned as a timeout (SPEC: 5 s). */
  requestTimeoutMs: number
}

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

export const DEFAULT_RETRY_SETTINGS: Readonly<RetrySettings> = Object.freeze({
  baseDelayMs: 1 * SECOND,
  maxDelayMs: 30 * MINUTE,
  windowMs: 4 * HOUR,
  retryAfterCapMs: 30 * MINUTE,
  requestTimeoutMs: 5 * SECOND,
})

/** Why an attempt got no 2xx, as recorded in `attempts.error_kind`. */
export type ErrorKind =
  | 'http' // the endpoint answered with a non-2xx, non-3xx status
  | 'redirect' // 3xx: never followed
  | 'timeout' // no response headers within the request timeout
  | 'connect' // refused, reset, closed or unreachable
  | 'dns' // the host name did not resolve
  | 'protocol' // the endpoint answered with something that is not HTTP/1.1
  | 'tls' // handshake or certificate verification failed; nothing was sent
  | 'ssrf' // the address is private/loopback/metadata and such destinations are not allowed
  | 'invalid_url' // not an absolute http(s) URL
  | 'invalid_request' // a header Sluice cannot send
  | 'unknown'

export type AttemptVerdict = 'success' | 'retryable' | 'final'

const RETRYABLE_ERRORS: ReadonlySet<ErrorKind> = new Set(['timeout', 'connect', 'dns', 'protocol', 'unknown'])

/** What an attempt's outcome means for the delivery. */
export function classifyAttempt(outcome: { statusCode?: number; errorKind?: ErrorKind }): AttemptVerdict {
  const { statusCode, errorKind } = outcome
  if (statusCode !== undefined) {
    if (statusCode >= 200 && statusCode <= 299) return 'success'
    return isRetryableStatus(statusCode) ? 'retryable' : 'final'
  }
  // No status: the request failed before a response. Unknown failures are retried (at-least-once);
  // the window bounds them.
  return errorKind !== undefined && !RETRYABLE_ERRORS.has(errorKind) ? 'final' : 'retryable'
}

/** 5xx, 408 Request Timeout and 429 Too Many Requests are worth another try; other statuses are not. */
export function isRetryableStatus(statusCode: number): boolean {
  return (statusCode >= 500 && statusCode <= 599) || statusCode === 408 || statusCode === 429
}

/**
 * `Retry-After` as a wait in milliseconds from `now`: delta-seconds (`120`) or an HTTP date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`). A date in the past means 0. Unreadable values are ignored.
 * Not capped here: `nextAttempt` applies the cap.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * SECOND
  // All three HTTP date formats start with a weekday; Date.parse alone would also accept "1.5".
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /i.test(text)) return undefined
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/**
 * Backoff before retry number `retryNumber` (1 = the first retry, after the first attempt).
 * `random` returns [0, 1) like Math.random; tests pass their own.
 */
export function backoffDelayMs(
  retryNumber: number,
  settings: RetrySettings = DEFAULT_RETRY_SETTINGS,
  random: () => number = Math.random,
): number {
  const { baseDelayMs, maxDelayMs } = settings
  // 2 ** 40 already exceeds any sensible maxDelayMs; clamping the exponent avoids Infinity.
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(Math.max(retryNumber, 1), 40))
  return Math.round(baseDelayMs + random() * Math.max(0, ceiling - baseDelayMs))
}

export type RetryDecision =
  | { action: 'retry'; at: number; delayMs: number }
  | { action: 'dead-letter'; reason: string }

/**
 * After a retryable failure: when to try again, or dead-letter.
 * `attemptsMade` counts the attempts so far, the one that just failed included.
 */
export function nextAttempt(
  input: { firstAttemptAt: number; attemptsMade: number; now: number; retryAfterMs?: number | undefined },
  settings: RetrySettings = DEFAULT_RETRY_SETTINGS,
  random: () => number = Math.random,
): RetryDecision {
  const windowEnd = input.firstAttemptAt + settings.windowMs
  if (input.now >= windowEnd) {
    return {
      action: 'dead-letter',
      reason: `still failing ${formatDuration(settings.windowMs)} after the first attempt (${input.attemptsMade} attempts)`,
    }
  }
  const backoff = backoffDelayMs(input.attemptsMade, settings, random)
  const askedFor = Math.min(input.retryAfterMs ?? 0, settings.retryAfterCapMs)
  const at = Math.min(input.now + Math.max(backoff, askedFor), windowEnd)
  return { action: 'retry', at, delayMs: at - input.now }
}

/** Merges overrides into the defaults and refuses numbers that would break the schedule. */
export function retrySettings(overrides: Partial<RetrySettings> = {}): RetrySettings {
  const settings = { ...DEFAULT_RETRY_SETTINGS, ...overrides }
  for (const [name, value] of Object.entries(settings)) {
    if (!Number.isFinite(value) || value < 0)
      throw new RangeError(`Retry setting ${name} must be a number ≥ 0.`)
  }
  if (settings.maxDelayMs < settings.baseDelayMs) {
    throw new RangeError('Retry setting maxDelayMs must be at least baseDelayMs.')
  }
  return settings
}

function formatDuration(ms: number): string {
  if (ms % HOUR === 0) return `${ms / HOUR} h`
  if (ms % MINUTE === 0) return `${ms / MINUTE} min`
  return `${ms / SECOND} s`
}
