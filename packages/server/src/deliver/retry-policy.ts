/**
 * The retry policy, in one place (docs/webhooks.md). What one request's result means:
 *
 * - Success: any 2xx.
 * - Retried: 5xx, 408 Request Timeout, 429 Too Many Requests; no response within the request timeout
 *   (5 s); connection, DNS and protocol errors; anything unforeseen (at-least-once; the window bounds it).
 * - Final (that URL is not tried again): other statuses (4xx, and 3xx because redirects are never
 *   followed), TLS failures, SSRF refusals, a URL, request or message Sluice cannot send.
 *
 * And when to try again:
 *
 * - Backoff: exponential with full jitter, floored at `baseDelayMs` so a retry never comes back at
 *   once: the n-th retry waits uniformly between `baseDelayMs` and min(`maxDelayMs`, base × 2^n).
 *   Jitter spreads the retries of many messages that failed together (an endpoint outage).
 * - `Retry-After` (seconds or HTTP date) is honoured as a minimum wait, capped at `retryAfterCapMs`
 *   so a receiver cannot park a delivery beyond the window.
 * - Window: retries stop `windowMs` (4 h) after the first attempt. A retry that would fall after the
 *   window's end is made at the end instead (one last chance); a failure at or after the end
 *   dead-letters the delivery, which can then be replayed.
 *
 * delivery-outcome.ts applies this to a delivery's URLs. The numbers are settings so tests (and
 * operators) can shrink them.
 */
import type { ErrorKind } from './error-kinds.ts'

export interface RetrySettings {
  /** Wait before the first retry, and the least any retry waits. */
  baseDelayMs: number
  /** Longest wait between two attempts. */
  maxDelayMs: number
  /** Retries stop this long after the first attempt; the delivery is then dead-lettered. */
  windowMs: number
  /** A receiver's `Retry-After` is honoured up to this long. */
  retryAfterCapMs: number
  /** A request without response headers after this long is abandoned as a timeout (default 5 s). */
  requestTimeoutMs: number
}

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

export const DEFAULT_RETRY_SETTINGS: Readonly<RetrySettings> = Object.freeze({
  baseDelayMs: 1 * SECOND,
  maxDelayMs: 30 * MINUTE,
  windowMs: 4 * HOUR,
  retryAfterCapMs: 10 * MINUTE,
  requestTimeoutMs: 5 * SECOND,
})

/** What one request's result means for its URL. */
export type AttemptVerdict = 'success' | 'retryable' | 'final'

/** Failures before any answer that are worth another try; every other kind is final. */
const RETRIED_ERROR_KINDS: ReadonlySet<ErrorKind> = new Set([
  'timeout',
  'connect',
  'dns',
  'protocol',
  'unknown',
])

/** The verdict on one request's result: by its status when the endpoint answered, else by its error kind. */
export function classifyAttempt(result: { statusCode?: number; errorKind?: ErrorKind }): AttemptVerdict {
  const { statusCode, errorKind } = result
  if (statusCode !== undefined) {
    if (statusCode >= 200 && statusCode <= 299) return 'success'
    return isRetryableStatus(statusCode) ? 'retryable' : 'final'
  }
  // A result without status or kind is unforeseen: retried, like `unknown`.
  return errorKind === undefined || RETRIED_ERROR_KINDS.has(errorKind) ? 'retryable' : 'final'
}

/** True when the endpoint accepted the message (a 2xx). */
export function isSuccess(result: { statusCode?: number; errorKind?: ErrorKind }): boolean {
  return classifyAttempt(result) === 'success'
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
    const attempts = input.attemptsMade === 1 ? '1 attempt' : `${input.attemptsMade} attempts`
    const window = formatDuration(settings.windowMs)
    return { action: 'dead-letter', reason: `still failing ${window} after the first attempt (${attempts})` }
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
  if (ms >= HOUR && ms % HOUR === 0) return `${ms / HOUR} h`
  if (ms >= MINUTE && ms % MINUTE === 0) return `${ms / MINUTE} min`
  if (ms >= SECOND && ms % SECOND === 0) return `${ms / SECOND} s`
  return `${ms} ms`
}
