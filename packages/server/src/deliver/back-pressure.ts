/**
 * Back-pressure, per URL (docs/webhooks.md, "Back-pressure"):
 *
 * - A `429` or `503` is the receiver asking for less: that URL's concurrency is halved (never below
 *   1), at most once per round of requests (those already in flight when it was halved do not halve
 *   it again), and with `Retry-After` (seconds or HTTP date) the URL sends nothing more until then,
 *   capped at 10 minutes.
 * - Each success adds 1/limit, so a full round of successes adds one request in flight, up to the
 *   destination's concurrency (additive increase, multiplicative decrease, as TCP does).
 * - `maxRequestsPerSecond` caps a destination's requests with a token bucket holding 100 ms of them.
 *
 * Per process, deliberately: the state changes on every response, and sharing it through the store
 * would cost a write per request; each process backs off on what it sees, and the receiver's answers
 * reach every process that keeps sending too much.
 */
import type { AttemptResult } from './http-sender.ts'

/** The longest a receiver's `Retry-After` holds a URL back. */
export const RETRY_AFTER_CAP_MS = 10 * 60_000

/** Statuses that ask the sender to slow down. */
const SLOW_DOWN = new Set([429, 503])

export class UrlPressure {
  /** Requests in flight to it that this process may have; fractional while it grows back. */
  limit: number
  inFlight = 0
  /** Sends nothing before this (epoch ms). */
  pausedUntil = 0
  readonly #max: number
  /** Requests started before this do not halve the limit again (they were in flight when it was). */
  #halvedAt = Number.NEGATIVE_INFINITY

  constructor(max: number) {
    this.#max = max
    this.limit = max
  }

  /** True when a request may start now. */
  canSend(now: number): boolean {
    return now >= this.pausedUntil && this.inFlight < Math.floor(this.limit)
  }

  /** Learns from one response (or failure) of a request that started at `result.attemptedAt`. */
  observe(result: AttemptResult, now: number): void {
    const status = result.statusCode
    if (status !== undefined && SLOW_DOWN.has(status)) {
      if (result.attemptedAt >= this.#halvedAt) {
        this.limit = Math.max(1, Math.floor(this.limit / 2))
        this.#halvedAt = now
      }
      if (result.retryAfterMs !== undefined)
        this.pausedUntil = Math.max(this.pausedUntil, now + Math.min(result.retryAfterMs, RETRY_AFTER_CAP_MS))
    } else if (status !== undefined && status >= 200 && status <= 299) {
      this.limit = Math.min(this.#max, this.limit + 1 / Math.floor(this.limit))
    }
  }
}

/** A destination's request rate cap (`maxRequestsPerSecond`). */
export class RateLimit {
  readonly perSecond: number
  readonly #burst: number
  #tokens: number
  #at: number

  constructor(perSecond: number, now: number) {
    this.perSecond = perSecond
    this.#burst = Math.max(1, perSecond / 10)
    this.#tokens = this.#burst
    this.#at = now
  }

  /** Takes `count` requests' worth when they are there; false (nothing taken) otherwise. */
  take(count: number, now: number): boolean {
    this.#refill(now)
    if (this.#tokens < Math.min(count, this.#burst)) return false
    this.#tokens -= count
    return true
  }

  /** When one more request may go. */
  nextAt(now: number): number {
    this.#refill(now)
    return this.#tokens >= 1 ? now : now + Math.ceil(((1 - this.#tokens) / this.perSecond) * 1000)
  }

  #refill(now: number): void {
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#at) / 1000) * this.perSecond)
    this.#at = now
  }
}
