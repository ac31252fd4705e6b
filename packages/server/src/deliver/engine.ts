/**
 * The delivery engine: claims due deliveries destination by destination, sends them, and records
 * every attempt and state change.
 *
 * - Isolation: each destination has its own in-flight limit and its own claims, so a slow,
 *   black-holed or failing endpoint only ever uses its own slots; work for healthy destinations is
 *   never queued behind it.
 * - Latency: the store announces every commit that creates or reschedules deliveries, and every
 *   destination change (`Store.watch`, from this process and, on PostgreSQL, from the others); timers
 *   cover retries coming due; a slow poll is only the fallback.
 * - Decisions: what an attempt means for the delivery (delivered, retried when, failed, dead-lettered)
 *   is decided in delivery-outcome.ts by the rules of retry-policy.ts; the engine records it.
 * - Crash safety: a claim is a lease in the store. If this process dies, the lease runs out and the
 *   delivery is claimed again. Outcomes are written as soon as requests settle (group commits, see
 *   `recordOutcome`), so after `kill -9` only deliveries whose success was not yet recorded are sent
 *   again.
 * - Batching: a destination with `settings.batching` sends batches instead (batching.ts decides which
 *   messages go together); they share the destination's slots and the bound on unrecorded outcomes, counted in
 *   requests: after `kill -9`, at most 2 × concurrency batches per destination are sent again.
 * - Endpoint health (endpoint-watch.ts): a disabled URL gets no requests; a destination whose every URL
 *   is disabled claims nothing, and its deliveries wait until a URL is enabled or their retry window
 *   ends. Back-pressure (back-pressure.ts): a URL paused by `Retry-After`, or at its concurrency, is
 *   left out of an attempt while another URL can take it; when none can, the work waits, and claims
 *   held for a pause are handed back rather than left to outlive their lease.
 */

import type {
  BatchOutcome,
  ClaimedBatch,
  ClaimedDelivery,
  DeliveryOutcome,
  DeliveryStore,
} from '../domain/delivery-store.ts'
import type { Destination } from '../domain/destinations.ts'
import type { HealthStore } from '../domain/health-store.ts'
import type { ReplayStore } from '../domain/replay-store.ts'
import type { Logger } from '../lib/logger.ts'
import { type DestinationCounters, type Metrics, NO_METRICS } from '../observe/metrics.ts'
import { NO_TRACING, type Tracing } from '../observe/tracing.ts'
import type { StoreWatch } from '../store/store.ts'
import { RateLimit } from './back-pressure.ts'
import { batchRequest, candidateLimit, planBatches, shapedBatches } from './batching.ts'
import { type DecidedOutcome, decideOutcome, invalidMessageOutcome } from './delivery-outcome.ts'
import { EndpointWatch } from './endpoint-watch.ts'
import { type PreparedRequest, prepareRequest, sendToUrls } from './fan-out.ts'
import type { AttemptResult, WebhookSender } from './http-sender.ts'
import type { RetrySettings } from './retry-policy.ts'
import { SettledOutcomes } from './settled-outcomes.ts'

export interface DeliveryEngineOptions {
  store: DeliveryStore & HealthStore & StoreWatch
  logger: Logger
  sender: WebhookSender
  retry: RetrySettings
  /** How long a claim holds; must outlast the request timeout. Default 30 s. */
  leaseMs?: number
  /** Most deliveries in flight per destination. Default 32. */
  concurrencyPerDestination?: number
  /** Fallback poll for config changes and due retries. Default 1 s. */
  pollIntervalMs?: number
  /**
   * Asked just before a claimed delivery is sent: true when it was withdrawn meanwhile (its message
   * erased by a deletion request), and must not go out. Default: never.
   */
  isWithdrawn?: (delivery: ClaimedDelivery) => boolean
  /** Counts attempts and outcome commits. Default: none. */
  metrics?: Metrics
  /** A span per attempt. Default: none. */
  tracing?: Tracing
  /**
   * Asked before a replay's delivery is sent: deliveries of a replay that was cancelled meanwhile are
   * deleted instead (`discardDeliveries`). Default: replays are never stopped.
   */
  replays?: Pick<ReplayStore, 'stoppedReplays'>
  /** Called once outcomes of replayed deliveries are committed: the replay runner has room again. Default: none. */
  onReplayOutcomes?: () => void
  /** How long one hour of `settings.autoDisable.afterHours` lasts. Default 3,600,000 ms; tests shorten it. */
  hourMs?: number
}

/**
 * How long an answer "this replay still runs" is trusted. Cancelling waits until none of the replay's
 * deliveries is leased, so a delivery sent on a slightly old answer still goes out before the cancel
 * answers; this only bounds how long the cancel may wait.
 */
const REPLAY_CHECK_MS = 100

/**
 * How often, at most, a destination whose every URL is disabled has its expired waiting deliveries
 * dead-lettered (a quarter of the retry window when that is shorter).
 */
const WAIT_EXPIRY_CHECK_MS = 60_000

/**
 * A look at a batching destination's due messages that formed no batch is not repeated for this long
 * (unless the leftovers' wait ends first): every new message wakes the engine, and reading and measuring
 * up to four batches' worth of messages on each wake would cost more than the batching saves. So a batch
 * that fills goes out within this long.
 */
const BATCH_LOOK_INTERVAL_MS = 50

/** How long the first outcome after a quiet spell waits for others to share its commit. */
const OUTCOME_GROUPING_MS = 5

interface DestinationSlot {
  destination: Destination
  counters: DestinationCounters
  inFlight: number
  /** Claimed (leased) and not yet sent; at most `concurrency` long. */
  ready: ClaimedDelivery[]
  /** Claimed batches not yet sent (batching destinations, and any with batches still open). */
  readyBatches: ClaimedBatch[]
  /** Batches are claimed for it: it batches, or has batches left from when it did. */
  sendsBatches: boolean
  /** Its due messages are looked at again no sooner than this (a look that formed nothing). */
  nextLookAt: number
  /** When the messages left over at the last look must go; null when none were. */
  flushAt: number | null
  /** A wake came before `nextLookAt`: new messages may be waiting for a look. */
  lookSkipped: boolean
  /** Settled, outcome not yet committed. Capped with inFlight so a crash can re-send at most 2 × concurrency. */
  unrecorded: number
  claiming: boolean
  /** `settings.maxRequestsPerSecond`, per process; null when uncapped. */
  rateLimit: RateLimit | null
  /** When its waiting deliveries' windows were last checked while every URL was disabled. */
  expiryCheckedAt: number
}

/** What a destination's URLs allow now: which can take a request, and whether any is enabled. */
interface UrlAvailability {
  /** Open (for this delivery), enabled, not paused and below its concurrency. */
  sendable: string[]
  /** Some open URL is enabled (else the work waits for an operator). */
  anyEnabled: boolean
  /** When a paused URL may send again; null when none is paused. */
  pausedUntil: number | null
}

/** An outcome waiting for its commit. */
interface PendingRecord<O> {
  outcome: O
  slot: DestinationSlot
  replayed: boolean
  /** The attempt count its delivery (or batch) was claimed at: what `settledDeliveries` holds. */
  attemptCount: number
}

export class DeliveryEngine {
  private readonly store: DeliveryStore & StoreWatch
  private readonly logger: Logger
  private readonly sender: WebhookSender
  private readonly retry: RetrySettings
  private readonly leaseMs: number
  /**
   * When each claimed delivery's or batch's lease runs out. A claim MUST NOT start a request that
   * could still be running, or its outcome still unrecorded, when its lease ends: another process
   * may claim it then and send it again.
   */
  private readonly leaseEnds = new WeakMap<ClaimedDelivery | ClaimedBatch, number>()
  /** What a claim must keep of its lease beyond the request timeout, to record the outcome in. */
  private readonly recordMarginMs: number
  /**
   * Deliveries (and batches) whose outcome is settled here, until no claim can bring back a row read
   * before that outcome was recorded. A claim that reached the store before the commit (queued behind
   * a long store call, say) finds them with their lease run out and leases them again; they MUST NOT
   * be sent again (settled-outcomes.ts).
   */
  private readonly settledDeliveries = new SettledOutcomes()
  private readonly settledBatches = new SettledOutcomes()
  private readonly concurrency: number
  private readonly pollIntervalMs: number
  private readonly isWithdrawn: (delivery: ClaimedDelivery) => boolean
  private readonly metrics: Metrics
  private readonly tracing: Tracing
  private readonly replays: Pick<ReplayStore, 'stoppedReplays'> | null
  /** Recent answers of `replayStopped`, shared by the deliveries asking at the same time. */
  private readonly replayChecks = new Map<string, { at: number; stopped: Promise<boolean> }>()
  private readonly onReplayOutcomes: () => void
  /** Per-URL health, disabling and back-pressure. */
  readonly endpoints: EndpointWatch

  private readonly slots = new Map<string, DestinationSlot>()
  private destinationsLoadedAt = 0
  private running = false
  private pumping = false
  /** Resolves when the running pump returns (stop waits for it: a claim in progress is then released). */
  private pumpEnded: Promise<void> = Promise.resolve()
  private endPump: () => void = () => {}
  private pumpAgain = false
  private wakeScheduled = false
  private timer: NodeJS.Timeout | undefined
  /** When `timer` fires; Infinity when none is armed. */
  private timerAt = Number.POSITIVE_INFINITY
  /** Requests in flight over all destinations, and who waits for them to end (`stop`). */
  private sending = 0
  private allSent: (() => void) | null = null
  /** Outcomes waiting for their commit, each with the attempt count it was claimed at (`settled…`). */
  private pendingOutcomes: PendingRecord<DeliveryOutcome>[] = []
  private pendingBatchOutcomes: PendingRecord<BatchOutcome>[] = []
  /** The batch outcomes' commit loop, while it runs. */
  private recordingBatches: Promise<void> | null = null
  /** The commit loop, while it runs. */
  private recording: Promise<void> | null = null
  private groupTimer: NodeJS.Timeout | undefined
  /** Outcomes that start a commit at once instead of waiting out the grouping delay. */
  private readonly groupSize: number
  private unwatch: Promise<(() => Promise<void>) | undefined> | undefined

  constructor(options: DeliveryEngineOptions) {
    this.store = options.store
    this.logger = options.logger
    this.sender = options.sender
    this.retry = options.retry
    this.leaseMs = options.leaseMs ?? 30_000
    this.concurrency = options.concurrencyPerDestination ?? 32
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000
    this.isWithdrawn = options.isWithdrawn ?? (() => false)
    this.metrics = options.metrics ?? NO_METRICS
    this.tracing = options.tracing ?? NO_TRACING
    this.replays = options.replays ?? null
    this.onReplayOutcomes = options.onReplayOutcomes ?? (() => {})
    this.groupSize = Math.max(1, Math.floor(this.concurrency / 2))
    this.endpoints = new EndpointWatch({
      store: options.store,
      logger: options.logger,
      concurrency: this.concurrency,
      ...(options.hourMs === undefined ? {} : { hourMs: options.hourMs }),
    })
    if (this.leaseMs <= this.retry.requestTimeoutMs) {
      throw new Error(`The delivery lease (${this.leaseMs} ms) must be longer than the request timeout.`)
    }
    this.recordMarginMs = Math.min(1_000, Math.floor((this.leaseMs - this.retry.requestTimeoutMs) / 4))
  }

  start(): void {
    if (this.running) return
    this.running = true
    // The store announces new work and destination changes as soon as they are committed, whoever
    // committed them; nothing else has to wake the engine.
    this.unwatch = this.store
      .watch((event) => {
        if (event === 'config') this.configChanged()
        else if (event === 'deliveries') this.wake()
      })
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, 'delivery engine: cannot watch the store; polling only')
        return undefined
      })
    this.wake()
  }

  /** Looks for due work soon; cheap to call often (calls in one event-loop turn coalesce). */
  private wake(): void {
    if (!this.running || this.wakeScheduled) return
    this.wakeScheduled = true
    setImmediate(() => {
      this.wakeScheduled = false
      void this.pump()
    })
  }

  /** Destinations were created, changed or deleted: re-read them and look for work now. */
  private configChanged(): void {
    this.destinationsLoadedAt = 0
    this.wake()
  }

  /** Stops claiming, lets in-flight requests finish (each is bounded by the request timeout) and records them. */
  async stop(): Promise<void> {
    this.running = false
    clearTimeout(this.timer)
    this.timerAt = Number.POSITIVE_INFINITY
    const unwatch = await this.unwatch
    await unwatch?.()
    // A claim in progress finishes and, seeing the engine stopped, hands its deliveries back.
    await this.pumpEnded
    // Claimed but never sent: hand them back so they go out at once after a restart, not after the lease.
    const unsent = [...this.slots.values()].flatMap((slot) =>
      slot.ready.splice(0).map((delivery) => delivery.id),
    )
    const unsentBatches = [...this.slots.values()].flatMap((slot) =>
      slot.readyBatches.splice(0).map((batch) => batch.id),
    )
    if (unsentBatches.length > 0)
      await this.store.releaseBatchClaims(unsentBatches).catch((error: unknown) => {
        this.logger.warn(
          { err: error },
          'releasing unsent batches failed; they return when their lease runs out',
        )
      })
    await this.store.releaseClaims(unsent).catch((error: unknown) => {
      this.logger.warn(
        { err: error },
        'releasing unsent claims failed; they return when their lease runs out',
      )
    })
    while (this.sending > 0) {
      await new Promise<void>((resolve) => {
        this.allSent = resolve
      })
    }
    await this.flushOutcomes()
    await this.recordingBatches
    this.endpoints.stop()
    await this.endpoints.settled()
  }

  /** Sends a sample message to every URL of a destination, outside the delivery records. */
  async sendTest(destination: Destination, payload: Record<string, unknown>): Promise<AttemptResult[]> {
    return sendToUrls(this.sender, destination.settings, prepareRequest(payload, destination.settings))
  }

  private async pump(): Promise<void> {
    if (this.pumping) {
      this.pumpAgain = true
      return
    }
    this.pumping = true
    this.pumpEnded = new Promise((resolve) => {
      this.endPump = resolve
    })
    try {
      do {
        this.pumpAgain = false
        await this.refreshDestinations()
        let nextDue: number | null = null
        for (const slot of this.slots.values()) {
          if (!this.running) return
          const due = await this.fillAlone(slot)
          if (due !== null && (nextDue === null || due < nextDue)) nextDue = due
        }
        this.scheduleTimer(nextDue)
      } while (this.pumpAgain && this.running)
    } catch (error) {
      this.logger.error({ err: error }, 'delivery engine: claiming failed; retrying shortly')
      this.scheduleTimer(Date.now() + this.pollIntervalMs)
    } finally {
      this.pumping = false
      this.endPump()
    }
  }

  /** Re-reads destinations at most once per poll interval (settings and enabled flags change rarely). */
  private async refreshDestinations(): Promise<void> {
    const now = Date.now()
    if (now - this.destinationsLoadedAt < this.pollIntervalMs && this.slots.size > 0) return
    this.destinationsLoadedAt = now
    await this.endpoints.load()
    const enabled = (await this.store.listDestinations()).filter((d) => d.enabled)
    const withOpenBatches = new Set(await this.store.destinationsWithOpenBatches())
    const ids = new Set(enabled.map((d) => d.id))
    for (const [id, slot] of this.slots) {
      if (ids.has(id)) continue
      // Disabled or deleted: its claimed-but-unsent deliveries go back (kept for when it is enabled).
      this.slots.delete(id)
      await this.releaseReady(slot)
    }
    for (const destination of enabled) {
      const sendsBatches = destination.settings.batching !== undefined || withOpenBatches.has(destination.id)
      const slot = this.slots.get(destination.id)
      const perSecond = destination.settings.maxRequestsPerSecond
      if (slot) {
        if (perSecond !== slot.rateLimit?.perSecond)
          slot.rateLimit = perSecond === undefined ? null : new RateLimit(perSecond, now)
        slot.destination = destination
        slot.sendsBatches = sendsBatches || slot.readyBatches.length > 0
        // It started batching: messages claimed to go alone go back, to be batched at once.
        if (destination.settings.batching !== undefined && slot.ready.length > 0)
          await this.store.releaseClaims(slot.ready.splice(0).map((delivery) => delivery.id))
      } else
        this.slots.set(destination.id, {
          destination,
          counters: this.metrics.destination(destination.id),
          inFlight: 0,
          ready: [],
          readyBatches: [],
          sendsBatches,
          nextLookAt: 0,
          flushAt: null,
          lookSkipped: false,
          unrecorded: 0,
          claiming: false,
          rateLimit: perSecond === undefined ? null : new RateLimit(perSecond, now),
          expiryCheckedAt: 0,
        })
    }
  }

  /**
   * `fill`, for one destination alone: a destination whose claim fails is tried again after the poll
   * interval, and the destinations after it are claimed for all the same.
   */
  private async fillAlone(slot: DestinationSlot): Promise<number | null> {
    try {
      return await this.fill(slot)
    } catch (error) {
      this.logger.error(
        { err: error, destinationId: slot.destination.id },
        'delivery engine: claiming failed; retrying shortly',
      )
      return Date.now() + this.pollIntervalMs
    }
  }

  /**
   * Keeps a destination's slots busy: starts claimed work, and claims more when the destination's
   * claimed-but-unsent buffer runs low. Up to one extra batch (`concurrency`) is claimed ahead, so a
   * slot that frees up starts its next request at once instead of waiting for a store round trip.
   * Returns when the destination's next retry is due, if it has nothing to do now.
   */
  private async fill(slot: DestinationSlot): Promise<number | null> {
    // Checked here first so that the usual case (a URL can take requests) makes no promise of its own.
    if (this.held(slot, Date.now())) {
      const held = await this.holdWhileUnavailable(slot)
      if (held !== undefined) return held
    }
    const batchesDue = slot.sendsBatches ? await this.fillBatches(slot) : null
    // A batching destination's messages all go in batches: none is claimed alone.
    if (slot.destination.settings.batching !== undefined) return batchesDue
    const due = await this.fillSingles(slot)
    return earliest(due, batchesDue)
  }

  /**
   * When none of the destination's URLs can take requests for a while (every one disabled, or every
   * enabled one paused by `Retry-After`), claims nothing and hands back what it holds; returns when to
   * look again (undefined: the URLs are available, go on).
   */
  private async holdWhileUnavailable(slot: DestinationSlot): Promise<number | null | undefined> {
    const now = Date.now()
    const { anyEnabled, sendable, pausedUntil } = this.availability(slot, [], now)
    if (anyEnabled && (sendable.length > 0 || pausedUntil === null)) return undefined
    await this.releaseReady(slot)
    if (anyEnabled) return pausedUntil
    // Every URL disabled: the deliveries wait for an operator, but not past their retry window.
    const checkEvery = Math.min(WAIT_EXPIRY_CHECK_MS, Math.max(10, this.retry.windowMs / 4))
    if (now - slot.expiryCheckedAt >= checkEvery) {
      slot.expiryCheckedAt = now
      const expired = await this.store.deadLetterWaiting(slot.destination.id, now - this.retry.windowMs, now)
      if (expired > 0) {
        this.logger.warn(
          { destinationId: slot.destination.id, count: expired },
          'deliveries dead-lettered: every URL of their destination stayed disabled for the whole retry window',
        )
        this.endpoints.deadLettered(slot.destination, expired)
      }
    }
    return now + checkEvery
  }

  /** True when none of the destination's URLs can take requests for a while: claim nothing for it. */
  private held(slot: DestinationSlot, now: number): boolean {
    const { anyEnabled, sendable, pausedUntil } = this.availability(slot, [], now)
    return !anyEnabled || (sendable.length === 0 && pausedUntil !== null)
  }

  /** Hands back claimed-but-unsent work (it would outlive its lease while the URLs cannot take it). */
  private async releaseReady(slot: DestinationSlot): Promise<void> {
    const unsent = slot.ready.splice(0).map((delivery) => delivery.id)
    if (unsent.length > 0) await this.store.releaseClaims(unsent)
    const unsentBatches = slot.readyBatches.splice(0).map((batch) => batch.id)
    if (unsentBatches.length > 0) await this.store.releaseBatchClaims(unsentBatches)
  }

  /** Which of the destination's URLs not in `closedUrls` can take a request now. */
  private availability(slot: DestinationSlot, closedUrls: readonly string[], now: number): UrlAvailability {
    const id = slot.destination.id
    const sendable: string[] = []
    let anyEnabled = false
    let pausedUntil: number | null = null
    for (const { url } of slot.destination.settings.webhooks) {
      if (closedUrls.includes(url) || this.endpoints.isDisabled(id, url)) continue
      anyEnabled = true
      const pressure = this.endpoints.pressure(id, url)
      if (pressure.canSend(now)) sendable.push(url)
      else if (pressure.pausedUntil > now)
        pausedUntil = Math.min(pausedUntil ?? Number.POSITIVE_INFINITY, pressure.pausedUntil)
    }
    return { sendable, anyEnabled, pausedUntil }
  }

  /**
   * Whether the first of a destination's claimed work may start now, and on which URLs: null when it
   * must wait (its URLs are busy or paused, or the rate cap is reached; a timer is set for the
   * latter two); `disabled` when every URL still open for it is disabled.
   */
  private startable(slot: DestinationSlot, closedUrls: readonly string[]): string[] | null | 'disabled' {
    const now = Date.now()
    const { sendable, anyEnabled, pausedUntil } = this.availability(slot, closedUrls, now)
    if (!anyEnabled) return 'disabled'
    if (sendable.length === 0) {
      if (pausedUntil !== null) this.scheduleTimer(pausedUntil)
      return null
    }
    if (slot.rateLimit && !slot.rateLimit.take(sendable.length, now)) {
      this.scheduleTimer(slot.rateLimit.nextAt(now))
      return null
    }
    return sendable
  }

  /** Counts requests to `urls` in flight (+1 when they start, -1 when they settle): back-pressure's bound. */
  private track(slot: DestinationSlot, urls: readonly string[], delta: 1 | -1): void {
    for (const url of urls) this.endpoints.pressure(slot.destination.id, url).inFlight += delta
  }

  /** Sends one attempt to `urls`, tells endpoint health, and decides what it means for the delivery or batch. */
  private async attempt(
    slot: DestinationSlot,
    claimed: ClaimedDelivery | ClaimedBatch,
    request: PreparedRequest,
    urls: readonly string[],
    replayId: string | null,
  ): Promise<DecidedOutcome> {
    const { settings } = slot.destination
    const results = await sendToUrls(this.sender, settings, request, urls, replayId)
    const now = Date.now()
    this.endpoints.observe(slot.destination, results, now)
    return decideOutcome(claimed, settings, results, now, this.retry)
  }

  /** `fill` for messages sent one per request. */
  private async fillSingles(slot: DestinationSlot): Promise<number | null> {
    this.startReady(slot)
    // A full group of outcomes waits for the commit in progress: the next commit claims with them
    // (`commitOutcomes`), so a claim of its own now would be one more transaction for the store.
    if (this.recording !== null && this.pendingOutcomes.length >= this.groupSize) return null
    const want = this.claimWanted(slot)
    if (want === 0) return null
    slot.claiming = true
    try {
      const now = Date.now()
      const { claimed, complete } = await this.settledDeliveries.claiming(async () => {
        const claimed = await this.store.claimDeliveries(slot.destination.id, want, now, this.leaseMs)
        return { claimed, complete: await this.claimed(slot, claimed, want, now) }
      })
      return complete && claimed.length === 0 && slot.inFlight === 0 && slot.ready.length === 0
        ? this.store.nextDueAt(slot.destination.id, now)
        : null
    } finally {
      slot.claiming = false
    }
  }

  /**
   * How many deliveries to claim for a destination now: up to one batch ahead of its free slots, and
   * only in groups of at least half a batch (fewer store round trips than claiming one by one as each
   * request finishes); 0 while a claim for it is in progress.
   */
  private claimWanted(slot: DestinationSlot): number {
    if (slot.destination.settings.batching !== undefined) return 0
    const ahead = this.claimAhead(slot)
    const want = ahead - slot.inFlight - slot.ready.length
    if (slot.claiming || !this.running || want < Math.ceil(ahead / 4)) return 0
    return this.held(slot, Date.now()) ? 0 : want
  }

  /**
   * How much work a destination holds claimed (in flight and ready): two rounds of its concurrency,
   * lowered while its URLs' back-pressure has lowered theirs, and no more than its rate cap sends in
   * half a lease (so nothing claimed waits out its lease).
   */
  private claimAhead(slot: DestinationSlot): number {
    const id = slot.destination.id
    let concurrency = 1
    for (const { url } of slot.destination.settings.webhooks)
      concurrency = Math.max(concurrency, Math.floor(this.endpoints.pressure(id, url).limit))
    const ahead = 2 * Math.min(this.concurrency, concurrency)
    const rate = slot.rateLimit?.perSecond
    return rate === undefined ? ahead : Math.max(1, Math.min(ahead, Math.floor((rate * this.leaseMs) / 2000)))
  }

  /**
   * Keeps a batching destination's slots busy: claims batches already formed (retries, and any left
   * by a process that stopped), then forms new ones from its due messages (full ones, and the rest
   * once its oldest waited `maxWaitMs`) as many as it has room for, leased to it as they are formed,
   * and starts them. Returns when it next has something to do (a retry, or the rest's wait running
   * out), if it has nothing now.
   */
  private async fillBatches(slot: DestinationSlot): Promise<number | null> {
    this.startReadyBatches(slot)
    if (slot.claiming || !this.running) return null
    slot.claiming = true
    try {
      const id = slot.destination.id
      const now = Date.now()
      let want = this.claimAhead(slot) - slot.inFlight - slot.readyBatches.length
      let claimed = 0
      if (want > 0) {
        const { batches, taken } = await this.settledBatches.claiming(async () => {
          const batches = await this.store.claimBatches(id, want, now, this.leaseMs)
          return { batches, taken: await this.batchesClaimed(slot, batches, now) }
        })
        if (!taken) return null
        claimed += batches.length
        if (batches.length === want) this.pumpAgain = true
        want -= batches.length
      }
      const { settings } = slot.destination
      const { batching } = settings
      if (batching !== undefined && want > 0) {
        if (now >= Math.min(slot.nextLookAt, slot.flushAt ?? Number.POSITIVE_INFINITY)) {
          const limit = candidateLimit(batching, want)
          // A candidate may be a single delivery sent (before the destination began batching) whose
          // outcome is not committed yet: it MUST NOT join a batch and go again.
          const { read, candidates } = await this.settledDeliveries.claiming(async () => {
            const read = await this.store.batchCandidates(id, limit, now)
            return { read, candidates: read.filter((c) => !this.settledDeliveries.has(c.id, c.attemptCount)) }
          })
          const plan = planBatches(candidates, batching, now, settings)
          slot.flushAt = plan.flushAt
          // Leftovers and nothing formed: not again for a while. Otherwise the next wake looks.
          slot.nextLookAt =
            plan.groups.length === 0 && plan.flushAt !== null ? now + BATCH_LOOK_INTERVAL_MS : 0
          slot.lookSkipped = false
          const groups = plan.groups.slice(0, want)
          if (groups.length > 0) {
            const formed = await this.store.formClaimedBatches(id, groups, now, this.leaseMs)
            const batches = shapedBatches(formed, candidates, plan, settings)
            if (!(await this.batchesClaimed(slot, batches, now))) return null
            claimed += batches.length
            want -= batches.length
          }
          // More due messages than this look read, and room for them: look again at once.
          if (read.length === limit && groups.length === plan.groups.length) this.pumpAgain = true
        } else slot.lookSkipped = true // new messages woke it: look once the interval is over
      }
      // With no room left, the next request to end wakes it: a leftover's wait running out meanwhile
      // is no reason to look (it would look every few milliseconds while the slots stay full).
      const flushAt = want > 0 ? earliest(slot.flushAt, slot.lookSkipped ? slot.nextLookAt : null) : null
      if (claimed > 0 || slot.inFlight > 0 || slot.readyBatches.length > 0) return flushAt
      return earliest(await this.store.nextBatchDueAt(id, now), flushAt)
    } finally {
      slot.claiming = false
    }
  }

  /**
   * Takes claimed batches into the destination's buffer and starts them. When the engine stopped, or
   * the destination went, meanwhile they are handed back instead (false).
   */
  private async batchesClaimed(
    slot: DestinationSlot,
    batches: ClaimedBatch[],
    claimedAt: number,
  ): Promise<boolean> {
    if (!this.running || !this.slots.has(slot.destination.id)) {
      if (batches.length > 0) await this.store.releaseBatchClaims(batches.map((batch) => batch.id))
      return false
    }
    for (const batch of batches) {
      if (this.settledBatches.has(batch.id, batch.attemptCount)) continue
      this.leaseEnds.set(batch, claimedAt + this.leaseMs)
      slot.readyBatches.push(batch)
    }
    this.startReadyBatches(slot)
    return true
  }

  /** Starts claimed batches while the destination has free slots (the same bound as `startReady`). */
  private startReadyBatches(slot: DestinationSlot): void {
    while (
      this.running &&
      slot.inFlight < this.concurrency &&
      slot.inFlight + slot.unrecorded < 2 * this.concurrency &&
      slot.readyBatches.length > 0
    ) {
      const urls = this.startable(slot, slot.readyBatches[0]!.closedUrls)
      if (urls === null) return
      const batch = slot.readyBatches.shift()!
      if (!this.leaseLeftFor(slot, batch)) continue
      if (urls === 'disabled') {
        // Its other URLs are closed for it: it waits like a failed attempt, without a request.
        const { outcome } = decideOutcome(batch, slot.destination.settings, [], Date.now(), this.retry)
        this.recordBatchOutcome(slot, batch, outcome)
        continue
      }
      void this.deliverBatch(slot, batch, urls)
    }
  }

  /** Never rejects: every failure becomes a recorded outcome of the whole batch. */
  private async deliverBatch(slot: DestinationSlot, batch: ClaimedBatch, urls: string[]): Promise<void> {
    slot.inFlight++
    this.sending++
    this.track(slot, urls, 1)
    const { destination } = slot
    try {
      // Members a deletion request erased meanwhile are not sent; rows of theirs still there go now
      // (a batch left empty with them), or they would come back at every lease.
      const withdrawn = batch.members.filter((member) => this.isWithdrawn(member))
      if (withdrawn.length > 0) await this.store.discardDeliveries(withdrawn.map((member) => member.id))
      const members = batch.members.filter((member) => !withdrawn.includes(member))
      if (members.length === 0) return
      // A batch holds one replay's messages or live ones only (batching.ts).
      if (await this.discardedAsCancelled(destination.id, members)) {
        await this.store.releaseBatchClaims([batch.id])
        return
      }
      // The checks above may have waited on the store: the lease MUST still cover the request.
      if (!this.leaseLeftFor(slot, batch)) return
      const request = batchRequest(batch, members, destination.settings)
      const startedAt = performance.now()
      const { outcome, deadLetterReason } = await this.attempt(
        slot,
        batch,
        request,
        urls,
        members[0]!.replayId,
      )
      slot.counters.attempted((performance.now() - startedAt) / 1000, outcome, members.length)
      this.countReplayed(destination.id, members[0]!.replayId, outcome, members.length)
      if (deadLetterReason !== undefined) {
        this.logger.warn(
          { batchId: batch.id, destinationId: destination.id, reason: deadLetterReason },
          'batch dead-lettered',
        )
        this.endpoints.deadLettered(destination, members.length)
      }
      this.recordBatchOutcome(slot, batch, outcome)
    } catch (error) {
      this.logger.error({ err: error, batchId: batch.id }, 'batch could not be prepared')
      const outcome = invalidMessageOutcome(batch, destination.settings, error, Date.now())
      this.recordBatchOutcome(slot, batch, outcome)
    } finally {
      slot.inFlight--
      this.track(slot, urls, -1)
      if (--this.sending === 0) this.allSent?.()
      this.startReadyBatches(slot)
      this.wake()
    }
  }

  /** Batch outcomes share commits as delivery outcomes do: those settling during a commit go in the next. */
  private recordBatchOutcome(
    slot: DestinationSlot,
    batch: ClaimedBatch,
    decided: Omit<BatchOutcome, 'batchId'>,
  ): void {
    slot.unrecorded++
    this.settledBatches.settle(batch.id, batch.attemptCount)
    // A batch holds one replay's calls or live calls only.
    const replayed = batch.members[0]?.replayId != null
    const outcome = { ...decided, batchId: batch.id }
    this.pendingBatchOutcomes.push({ outcome, slot, replayed, attemptCount: batch.attemptCount })
    this.recordingBatches ??= this.commitBatchOutcomes()
  }

  private async commitBatchOutcomes(): Promise<void> {
    while (this.pendingBatchOutcomes.length > 0) {
      const group = this.pendingBatchOutcomes
      this.pendingBatchOutcomes = []
      try {
        const startedAt = performance.now()
        await this.store.recordBatchOutcomes(group.map((item) => item.outcome))
        this.metrics.committed('outcomes', (performance.now() - startedAt) / 1000, group.length)
      } catch (error) {
        // The leases run out and these batches are attempted again: at-least-once holds.
        this.logger.error({ err: error, count: group.length }, 'recording batch outcomes failed')
      }
      for (const { slot, outcome, attemptCount } of group) {
        slot.unrecorded--
        this.settledBatches.recorded(outcome.batchId, attemptCount)
      }
      for (const slot of new Set(group.map((item) => item.slot))) this.startReadyBatches(slot)
      if (group.some((item) => item.replayed)) this.onReplayOutcomes()
      this.wake()
    }
    this.recordingBatches = null
  }

  /**
   * Takes a claim's deliveries into the destination's buffer and starts them. When the engine stopped
   * meanwhile they are handed back instead (false).
   */
  private async claimed(
    slot: DestinationSlot,
    claimed: ClaimedDelivery[],
    want: number,
    claimedAt: number,
  ): Promise<boolean> {
    if (!this.running || !this.slots.has(slot.destination.id)) {
      if (claimed.length > 0) await this.store.releaseClaims(claimed.map((delivery) => delivery.id))
      return false
    }
    for (const delivery of claimed) {
      if (this.settledDeliveries.has(delivery.id, delivery.attemptCount)) continue
      this.leaseEnds.set(delivery, claimedAt + this.leaseMs)
      slot.ready.push(delivery)
    }
    this.startReady(slot)
    if (claimed.length === want) this.pumpAgain = true
    return true
  }

  /** Starts claimed deliveries while the destination has free slots. */
  private startReady(slot: DestinationSlot): void {
    // Successes not yet committed are the ones a crash would send again: in flight plus unrecorded
    // stays below 2 × concurrency, which bounds those duplicates.
    while (
      this.running &&
      slot.inFlight < this.concurrency &&
      slot.inFlight + slot.unrecorded < 2 * this.concurrency &&
      slot.ready.length > 0
    ) {
      const urls = this.startable(slot, slot.ready[0]!.closedUrls)
      if (urls === null) return
      const delivery = slot.ready.shift()!
      if (!this.leaseLeftFor(slot, delivery)) continue
      if (urls === 'disabled') {
        // Its other URLs are closed for it: it waits like a failed attempt, without a request.
        this.recordOutcome(
          slot,
          delivery,
          decideOutcome(delivery, slot.destination.settings, [], Date.now(), this.retry).outcome,
        )
        continue
      }
      void this.deliver(slot, delivery, urls)
    }
  }

  /**
   * Whether a request for `claimed` started now ends, timeout included, with time left in its lease
   * to record the outcome. If not (it waited in the buffer too long: slow requests ahead of it, a
   * request timeout close to the lease), it is left unsent and unrecorded, and nothing is handed
   * back: another process may hold it already. Its lease runs out and it is claimed again.
   */
  private leaseLeftFor(slot: DestinationSlot, claimed: ClaimedDelivery | ClaimedBatch): boolean {
    const leaseEnd = this.leaseEnds.get(claimed) ?? 0
    if (Date.now() + this.retry.requestTimeoutMs + this.recordMarginMs <= leaseEnd) return true
    const which = 'members' in claimed ? { batchId: claimed.id } : { deliveryId: claimed.id }
    this.logger.warn(
      { destinationId: slot.destination.id, ...which },
      'not sent: too little of its lease is left for a request; it is claimed again when the lease runs out (SLUICE_DELIVERY_LEASE_MS should be well over twice SLUICE_REQUEST_TIMEOUT_MS)',
    )
    return false
  }

  /** Never rejects: every failure becomes a recorded outcome. */
  private async deliver(slot: DestinationSlot, delivery: ClaimedDelivery, urls: string[]): Promise<void> {
    slot.inFlight++
    this.sending++
    this.track(slot, urls, 1)
    const { destination } = slot
    // Tracing off (the usual case): no span, and no attributes object built to end it with.
    const span = this.tracing.enabled ? this.tracing.startDelivery(destination.id, delivery) : null
    try {
      // A deletion request erased its message: it MUST NOT go out. Its row usually went with the
      // request (same transaction); one that did not (its call committed just after the request's
      // cancellation) is deleted here, or it would come back at every lease.
      if (this.isWithdrawn(delivery)) {
        await this.store.discardDeliveries([delivery.id])
        span?.end({ 'sluice.outcome': 'withdrawn' })
        return
      }
      // Live deliveries (no replay) are never cancelled: no check, and no await before the send.
      if (delivery.replayId !== null && (await this.discardedAsCancelled(destination.id, [delivery]))) {
        span?.end({ 'sluice.outcome': 'cancelled' })
        return
      }
      // The checks above may have waited on the store: the lease MUST still cover the request.
      if (delivery.replayId !== null && !this.leaseLeftFor(slot, delivery)) {
        span?.end({ 'sluice.outcome': 'lease-short' })
        return
      }
      const request = prepareRequest(delivery.payload, destination.settings)
      const startedAt = performance.now()
      const { outcome, deadLetterReason } = await this.attempt(
        slot,
        delivery,
        request,
        urls,
        delivery.replayId,
      )
      slot.counters.attempted((performance.now() - startedAt) / 1000, outcome)
      this.countReplayed(destination.id, delivery.replayId, outcome, 1)
      span?.end({ 'sluice.outcome': outcome.deadLettered ? 'dead_lettered' : outcome.status })
      if (deadLetterReason !== undefined) {
        // The operator's record of why: the delivery now waits for a replay.
        this.logger.warn(
          { deliveryId: delivery.id, destinationId: destination.id, reason: deadLetterReason },
          'delivery dead-lettered',
        )
        this.endpoints.deadLettered(destination, 1)
      }
      this.recordOutcome(slot, delivery, outcome)
    } catch (error) {
      // A message that cannot be shaped will never succeed: fail it visibly rather than retry forever.
      this.logger.error({ err: error, deliveryId: delivery.id }, 'delivery could not be prepared')
      span?.fail(error)
      this.recordOutcome(
        slot,
        delivery,
        invalidMessageOutcome(delivery, destination.settings, error, Date.now()),
      )
    } finally {
      slot.inFlight--
      this.track(slot, urls, -1)
      if (--this.sending === 0) this.allSent?.()
      this.startReady(slot)
      this.wake()
    }
  }

  /**
   * True when these deliveries (all of one replay) belong to a replay that was cancelled: they were
   * deleted instead of sent. Live deliveries never are.
   */
  private async discardedAsCancelled(destinationId: string, deliveries: ClaimedDelivery[]): Promise<boolean> {
    const replayId = deliveries[0]?.replayId ?? null
    if (replayId === null || this.replays === null) return false
    if (!(await this.replayStopped(replayId))) return false
    await this.store.discardDeliveries(deliveries.map((delivery) => delivery.id))
    this.metrics.replayed(destinationId, 'cancelled', deliveries.length)
    return true
  }

  private replayStopped(replayId: string): Promise<boolean> {
    const now = Date.now()
    const known = this.replayChecks.get(replayId)
    if (known !== undefined && now - known.at < REPLAY_CHECK_MS) return known.stopped
    if (this.replayChecks.size >= 1_000) this.replayChecks.clear()
    const stopped = this.replays!.stoppedReplays([replayId]).then((ids) => ids.includes(replayId))
    // A stopped replay stays stopped: that answer is kept for good.
    void stopped.then(
      (yes) => {
        if (yes) this.replayChecks.set(replayId, { at: Number.POSITIVE_INFINITY, stopped })
      },
      () => this.replayChecks.delete(replayId),
    )
    this.replayChecks.set(replayId, { at: now, stopped })
    return stopped
  }

  /** Outcomes of a replay's messages were recorded: counts those that reached a final state. */
  private countReplayed(
    destinationId: string,
    replayId: string | null,
    outcome: Pick<DeliveryOutcome, 'status'>,
    messages: number,
  ): void {
    if (replayId === null) return
    if (outcome.status !== 'delivered' && outcome.status !== 'failed') return
    this.metrics.replayed(destinationId, outcome.status, messages)
  }

  /**
   * Group commit. Each commit is one fsynced transaction, so outcomes share commits: while one runs,
   * those that settle meanwhile gather and go in the next, which starts as soon as it returns. After a
   * quiet spell, the first outcome waits a few milliseconds for company, or until `groupSize` have
   * gathered. The receiver already has the message, so none of this adds to delivery latency. It
   * only holds slots: a settled but unrecorded success still counts against its destination
   * (`startReady`), which is what bounds the duplicates a crash can cause; so under load a commit
   * starts without waiting out the delay, before the unrecorded outcomes stall the destination.
   */
  private recordOutcome(slot: DestinationSlot, delivery: ClaimedDelivery, outcome: DeliveryOutcome): void {
    slot.unrecorded++
    const { attemptCount } = delivery
    this.settledDeliveries.settle(delivery.id, attemptCount)
    this.pendingOutcomes.push({ outcome, slot, replayed: delivery.replayId !== null, attemptCount })
    if (this.recording) return // the running commit loop takes it next
    if (this.pendingOutcomes.length >= this.groupSize) void this.flushOutcomes()
    else this.groupTimer ??= setTimeout(() => void this.flushOutcomes(), OUTCOME_GROUPING_MS)
  }

  /** Commits every pending outcome; resolves when they (and any that arrive meanwhile) are committed. */
  private flushOutcomes(): Promise<void> {
    clearTimeout(this.groupTimer)
    this.groupTimer = undefined
    if (!this.recording && this.pendingOutcomes.length > 0) this.recording = this.commitOutcomes()
    return this.recording ?? Promise.resolve()
  }

  /**
   * The commit loop. Under load, each commit also claims the next deliveries of every destination
   * that has room for them (`Store.recordOutcomes` does both in one store round trip): the leases just
   * released and the slots just freed are refilled without another trip.
   */
  private async commitOutcomes(): Promise<void> {
    while (this.pendingOutcomes.length > 0) {
      const batch = this.pendingOutcomes
      this.pendingOutcomes = []
      const outcomes = batch.map((item) => item.outcome)
      const now = Date.now()
      const claiming: { slot: DestinationSlot; want: number }[] = []
      // Only under load (a full group): a slot that claims with the commit cannot claim on its own
      // meanwhile, so at a low rate a new delivery would wait for the commit before it is claimed.
      for (const slot of batch.length >= this.groupSize ? this.slots.values() : []) {
        const want = this.claimWanted(slot)
        if (want === 0) continue
        slot.claiming = true
        claiming.push({ slot, want })
      }
      try {
        const startedAt = performance.now()
        const claimed = await this.store.recordOutcomes(
          outcomes,
          claiming.map(({ slot, want }) => ({
            destinationId: slot.destination.id,
            limit: want,
            now,
            leaseMs: this.leaseMs,
          })),
        )
        this.metrics.committed('outcomes', (performance.now() - startedAt) / 1000, outcomes.length)
        for (const [i, { slot, want }] of claiming.entries()) {
          slot.claiming = false
          await this.claimed(slot, claimed[i] ?? [], want, now)
        }
      } catch (error) {
        if (outcomes.length > 1) await this.recordAlone(outcomes)
        // The leases run out and these deliveries are attempted again: at-least-once holds.
        else this.logger.error({ err: error, count: outcomes.length }, 'recording delivery outcomes failed')
      } finally {
        for (const { slot } of claiming) slot.claiming = false
      }
      for (const { slot, outcome, attemptCount } of batch) {
        slot.unrecorded--
        this.settledDeliveries.recorded(outcome.deliveryId, attemptCount)
      }
      for (const slot of new Set(batch.map((item) => item.slot))) this.startReady(slot)
      if (batch.some((item) => item.replayed)) this.onReplayOutcomes()
      // Released leases, new due times and freed slots: look again.
      this.wake()
    }
    this.recording = null
  }

  /**
   * Records outcomes one by one, after a commit of them together failed: one the store refuses must not
   * take the others with it (they would be sent again when their leases ran out).
   */
  private async recordAlone(outcomes: DeliveryOutcome[]): Promise<void> {
    for (const outcome of outcomes) {
      try {
        await this.store.recordOutcomes([outcome], [])
      } catch (error) {
        // Its lease runs out and it is attempted again: at-least-once holds.
        this.logger.error(
          { err: error, deliveryId: outcome.deliveryId },
          'recording a delivery outcome failed',
        )
      }
    }
  }

  /**
   * Pumps again at `nextDue` or after the poll interval, whichever is first. A timer already armed for
   * no later than that is kept: pumping early is harmless, and re-arming after every pump (thousands
   * a second under load) is not free.
   */
  private scheduleTimer(nextDue: number | null): void {
    if (!this.running) return
    const now = Date.now()
    const at = Math.max(now + 5, Math.min(nextDue ?? Number.POSITIVE_INFINITY, now + this.pollIntervalMs))
    if (this.timerAt <= at && this.timerAt > now) return
    clearTimeout(this.timer)
    this.timerAt = at
    this.timer = setTimeout(() => {
      this.timerAt = Number.POSITIVE_INFINITY
      void this.pump()
    }, at - now)
    this.timer.unref()
  }
}

/** The earlier of two optional times. */
function earliest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b)
}
