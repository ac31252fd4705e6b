/**
 * What the delivery engine learns about each URL from its requests, and acts on (docs/webhooks.md,
 * "Endpoint health"):
 *
 * - A URL's failing streak is written once when it starts and once when it ends (a success after
 *   failures), never per successful request: the figures are read from the attempts.
 * - `410 Gone` disables the URL at once; with `autoDisable`, so does a streak older than `afterHours`
 *   (checked against the shared streak, which any process's success ends).
 * - Alerts: `destination.url.failing` once the URL failed 20 times in a row (at most hourly),
 *   `destination.url.disabled`, `destination.url.recovered` (the end of a streak that was alerted or
 *   reached 20 failures), `delivery.dead_lettered` (at most every 10 minutes per destination, with
 *   the count since the last one).
 *
 * The disabled flags are shared (store); back-pressure (back-pressure.ts) is this process's own.
 */
import type { DeliveryStore } from '../domain/delivery-store.ts'
import type { Destination } from '../domain/destinations.ts'
import { attemptError, endpointHealth } from '../domain/endpoint-health.ts'
import type { HealthStore } from '../domain/health-store.ts'
import type { Logger } from '../lib/logger.ts'
import { UrlPressure } from './back-pressure.ts'
import type { AttemptResult } from './http-sender.ts'

/** Failures in a row that make a `destination.url.failing` alert. */
export const FAILING_ALERT_AFTER = 20
const FAILING_ALERT_QUIET_MS = 3_600_000
const DEAD_LETTER_ALERT_QUIET_MS = 10 * 60_000
/** The shared streak is read again after every this many local failures, until it was alerted. */
const SHARED_CHECK_EVERY = 5

interface UrlWatch {
  destinationId: string
  url: string
  failingSince: number | null
  /** Failures in a row this process saw. */
  consecutive: number
  /** This streak was alerted (by this process). */
  alerted: boolean
  disabled: boolean
  disabledReason: string | null
  pressure: UrlPressure
}

export interface EndpointWatchOptions {
  store: HealthStore & DeliveryStore
  logger: Logger
  /** Where each URL's concurrency starts and grows back to (the destination's concurrency). */
  concurrency: number
  /** How long one hour of `autoDisable.afterHours` lasts. Default 3,600,000 ms; tests shorten it. */
  hourMs?: number
}

export class EndpointWatch {
  readonly #store: HealthStore & DeliveryStore
  readonly #logger: Logger
  readonly #concurrency: number
  readonly #hourMs: number
  /** By destination, then URL: two lookups of strings whose hashes V8 keeps, no key built per request. */
  readonly #urls = new Map<string, Map<string, UrlWatch>>()
  /** Dead letters not yet in an alert, per destination. */
  readonly #deadLetters = new Map<string, number>()
  #deadLetterTimer: NodeJS.Timeout | undefined
  /** Writes in progress, so `settled` can wait for them (tests, shutdown). */
  readonly #writes = new Set<Promise<unknown>>()

  constructor(options: EndpointWatchOptions) {
    this.#store = options.store
    this.#logger = options.logger
    this.#concurrency = options.concurrency
    this.#hourMs = options.hourMs ?? 3_600_000
  }

  /** Takes the shared states (disabled URLs, running streaks) from the store. */
  async load(): Promise<void> {
    const states = await this.#store.endpointStates()
    const seen = new Set<UrlWatch>()
    for (const state of states) {
      const watch = this.#watch(state.destinationId, state.url)
      seen.add(watch)
      watch.disabled = state.disabledAt !== null
      watch.disabledReason = state.disabledReason
      if (state.failingSince === null) {
        watch.failingSince = null
        watch.consecutive = 0
        watch.alerted = false
      } else watch.failingSince ??= state.failingSince
    }
    for (const watch of [...this.#urls.values()].flatMap((byUrl) => [...byUrl.values()])) {
      if (seen.has(watch)) continue
      watch.disabled = false
      watch.disabledReason = null
    }
  }

  isDisabled(destinationId: string, url: string): boolean {
    return this.#urls.get(destinationId)?.get(url)?.disabled ?? false
  }

  pressure(destinationId: string, url: string): UrlPressure {
    return this.#watch(destinationId, url).pressure
  }

  /** Learns from one attempt's requests; the writes and alerts it causes run in the background. */
  observe(destination: Destination, results: readonly AttemptResult[], now: number): void {
    for (const result of results) {
      const watch = this.#watch(destination.id, result.url)
      watch.pressure.observe(result, now)
      if (result.statusCode !== undefined && result.statusCode >= 200 && result.statusCode <= 299)
        this.#succeeded(destination, watch, now)
      else this.#failed(destination, watch, result, now)
    }
  }

  /** Counts dead-lettered deliveries for the destination's next `delivery.dead_lettered` alert. */
  deadLettered(destination: Destination, count: number): void {
    if (count <= 0) return
    this.#deadLetters.set(destination.id, (this.#deadLetters.get(destination.id) ?? 0) + count)
    this.#background(this.#reportDeadLetters())
  }

  /** Resolves when the writes started so far are done. */
  async settled(): Promise<void> {
    while (this.#writes.size > 0) await Promise.allSettled([...this.#writes])
  }

  stop(): void {
    clearTimeout(this.#deadLetterTimer)
  }

  #watch(destinationId: string, url: string): UrlWatch {
    let byUrl = this.#urls.get(destinationId)
    if (byUrl === undefined) {
      byUrl = new Map()
      this.#urls.set(destinationId, byUrl)
    }
    let watch = byUrl.get(url)
    if (!watch) {
      watch = {
        destinationId,
        url,
        failingSince: null,
        consecutive: 0,
        alerted: false,
        disabled: false,
        disabledReason: null,
        pressure: new UrlPressure(this.#concurrency),
      }
      byUrl.set(url, watch)
    }
    return watch
  }

  #succeeded(destination: Destination, watch: UrlWatch, now: number): void {
    if (watch.failingSince === null) return
    const reachedAlert = watch.alerted || watch.consecutive >= FAILING_ALERT_AFTER
    watch.failingSince = null
    watch.consecutive = 0
    watch.alerted = false
    this.#background(
      (async () => {
        const ended = await this.#store.markEndpointRecovered(destination.id, watch.url, now)
        if (!ended) return
        // The failing alert may have come from another process (the failures were shared out, or
        // the one that saw them has since stopped): a recovery is owed when the URL's last alert of
        // the two says it is failing.
        const owed =
          reachedAlert ||
          (await this.#store.lastOperationalEventType(subject(destination.id, watch.url), [
            'destination.url.failing',
            'destination.url.recovered',
          ])) === 'destination.url.failing'
        if (owed)
          await this.#store.recordOperationalEvent(
            {
              type: 'destination.url.recovered',
              subject: subject(destination.id, watch.url),
              data: { destinationId: destination.id, destinationName: destination.name, url: watch.url },
            },
            now,
          )
      })(),
    )
  }

  #failed(destination: Destination, watch: UrlWatch, result: AttemptResult, now: number): void {
    watch.consecutive++
    if (watch.failingSince === null) {
      watch.failingSince = result.attemptedAt
      this.#background(this.#store.markEndpointFailing(destination.id, watch.url, result.attemptedAt))
    }
    if (watch.disabled) return
    if (result.statusCode === 410) {
      this.#disable(destination, watch, 'The URL answered 410 Gone.', now)
      return
    }
    const afterHours = destination.settings.autoDisable?.afterHours
    if (afterHours !== undefined && now - watch.failingSince >= afterHours * this.#hourMs) {
      this.#background(this.#autoDisable(destination, watch, afterHours, now))
    }
    if (!watch.alerted && watch.consecutive % SHARED_CHECK_EVERY === 0) {
      this.#background(this.#alertFailing(destination, watch, attemptError(toSummary(result)), now))
    }
  }

  /** Disables only when the shared streak (every process's requests) is as old as the setting asks. */
  async #autoDisable(
    destination: Destination,
    watch: UrlWatch,
    afterHours: number,
    now: number,
  ): Promise<void> {
    const shared = (await this.#store.endpointStates()).find(
      (state) => state.destinationId === destination.id && state.url === watch.url,
    )
    if (shared?.failingSince == null || now - shared.failingSince < afterHours * this.#hourMs) return
    const hours = afterHours === 1 ? '1 hour' : `${afterHours} hours`
    this.#disable(destination, watch, `Every request failed for ${hours} (settings.autoDisable).`, now)
  }

  #disable(destination: Destination, watch: UrlWatch, reason: string, now: number): void {
    watch.disabled = true
    watch.disabledReason = reason
    this.#logger.warn({ destinationId: destination.id, url: watch.url, reason }, 'destination URL disabled')
    this.#background(
      (async () => {
        if (!(await this.#store.disableEndpoint(destination.id, watch.url, reason, now))) return
        await this.#store.recordOperationalEvent(
          {
            type: 'destination.url.disabled',
            subject: subject(destination.id, watch.url),
            data: {
              destinationId: destination.id,
              destinationName: destination.name,
              url: watch.url,
              reason,
            },
          },
          now,
        )
      })(),
    )
  }

  /** Alerts once the shared count of failures in a row reaches the threshold (at most hourly per URL). */
  async #alertFailing(
    destination: Destination,
    watch: UrlWatch,
    lastError: string,
    now: number,
  ): Promise<void> {
    // Every attempt goes to each open URL, so this many of the newest hold the URL's last 20 or more.
    const sample = 2 * FAILING_ALERT_AFTER * destination.settings.webhooks.length
    const attempts = await this.#store.recentAttempts(destination.id, sample)
    const [health] = endpointHealth([watch.url], [], attempts, now)
    if (health === undefined || health.consecutiveFailures < FAILING_ALERT_AFTER) return
    watch.alerted = true
    await this.#store.recordOperationalEvent(
      {
        type: 'destination.url.failing',
        subject: subject(destination.id, watch.url),
        data: {
          destinationId: destination.id,
          destinationName: destination.name,
          url: watch.url,
          consecutiveFailures: health.consecutiveFailures,
          lastError: health.lastError ?? lastError,
        },
      },
      now,
      FAILING_ALERT_QUIET_MS,
    )
  }

  /** Sends what it can now; what the quiet period holds back goes when it ends. */
  async #reportDeadLetters(): Promise<void> {
    const now = Date.now()
    for (const [destinationId, count] of [...this.#deadLetters]) {
      this.#deadLetters.delete(destinationId)
      const recorded = await this.#store.recordOperationalEvent(
        { type: 'delivery.dead_lettered', subject: destinationId, data: { destinationId, count } },
        now,
        DEAD_LETTER_ALERT_QUIET_MS,
      )
      if (recorded === null)
        this.#deadLetters.set(destinationId, (this.#deadLetters.get(destinationId) ?? 0) + count)
    }
    if (this.#deadLetters.size > 0 && this.#deadLetterTimer === undefined) {
      this.#deadLetterTimer = setTimeout(() => {
        this.#deadLetterTimer = undefined
        this.#background(this.#reportDeadLetters())
      }, 60_000)
      this.#deadLetterTimer.unref()
    }
  }

  #background(work: Promise<unknown>): void {
    const tracked = work.catch((error: unknown) => {
      this.#logger.warn({ err: error }, 'endpoint health: a write failed; the next request tries again')
    })
    this.#writes.add(tracked)
    void tracked.finally(() => this.#writes.delete(tracked))
  }
}

/** What rate limits count a URL's alerts by. */
function subject(destinationId: string, url: string): string {
  return `${destinationId} ${url}`
}

function toSummary(result: AttemptResult): { statusCode: number | null; errorText: string | null } {
  return { statusCode: result.statusCode ?? null, errorText: result.errorText ?? null }
}
