/**
 * Runs replays (docs/webhooks.md, "Replay and backfill"): reads each running replay's window in small
 * steps and creates its deliveries, which the delivery engine then sends like any other (subscription,
 * filters, mapping, batching, retries), each request with `X-Sluice-Replay`.
 *
 * - One runner per replay: a replay is leased (store) to one process, renewed at every step; a process
 *   that dies leaves it to another (or to itself after a restart) once the lease runs out.
 * - Crash safety: a step's deliveries, the cursor and the counters commit in one transaction, and only
 *   from the cursor the step read at; so each call gets at most one delivery per replay, whatever dies
 *   when, and the engine's own bound on repeated sends applies from there.
 * - Yielding to live traffic: a step is taken only while the destination has no live delivery waiting
 *   to be claimed and fewer than `maxOutstanding` of the replay's deliveries are waiting, so live
 *   deliveries never queue behind more than that many replayed ones; and while live calls flow, steps
 *   are paced to a share of the replay's idle rate (replay-pace.ts).
 * - Reading behind the present: a call's receive time is taken before its commit, so a call may become
 *   visible after calls received later than it. A cursor that has passed its receive time would then
 *   never read it, and for a destination that did not get it live (disabled, or not connected to the
 *   call's source when it arrived) it would be lost to the replay. So steps read only calls received at
 *   least `holdMs` ago, and a window reaching into the future is done `holdMs` after its end.
 */
import { randomBytes } from 'node:crypto'
import type { DeliveryStore } from '../domain/delivery-store.ts'
import type { Destination } from '../domain/destinations.ts'
import type { ReplayStore } from '../domain/replay-store.ts'
import type { LeasedReplay } from '../domain/replays.ts'
import type { Logger } from '../lib/logger.ts'
import { type Metrics, NO_METRICS } from '../observe/metrics.ts'
import { replayMatches } from '../route/replay-match.ts'
import { isStoreUnavailable } from '../store/errors.ts'
import type { StoreWatch } from '../store/store.ts'
import { ReplayPace } from './replay-pace.ts'

/** Steps of a replay failing this many times in a row fail the replay. */
const MAX_FAILED_STEPS = 5

export interface ReplayRunnerOptions {
  store: ReplayStore & Pick<DeliveryStore, 'getDestination'> & StoreWatch
  logger: Logger
  metrics?: Metrics
  /** How long a replay stays this process's without a step. Default 15 s. */
  leaseMs?: number
  /** Calls read per step (of which at most the room left creates deliveries). Default 200. */
  stepSize?: number
  /**
   * Most of a replay's deliveries waiting at once (a batching destination: at least two full batches).
   * Default 32, the engine's default concurrency: live deliveries never wait behind more than one wave of them.
   */
  maxOutstanding?: number
  /** Look for work at least this often. Default 250 ms. */
  pollMs?: number
  /**
   * Read only calls received at least this long ago: longer than a call takes from its receipt to its
   * commit (milliseconds normally; 10 s is what SDKs wait for an answer before retrying). Default
   * 10,000 ms (`SLUICE_REPLAY_HOLD_MS`).
   */
  holdMs?: number
}

export class ReplayRunner {
  private readonly store: ReplayRunnerOptions['store']
  private readonly logger: Logger
  private readonly metrics: Metrics
  private readonly leaseMs: number
  private readonly stepSize: number
  private readonly maxOutstanding: number
  private readonly pollMs: number
  private readonly holdMs: number
  /** This process's name in replay leases. */
  readonly runnerId = `runner_${randomBytes(8).toString('hex')}`
  private running = false
  private timer: NodeJS.Timeout | undefined
  private pacedTimer: NodeJS.Timeout | undefined
  private ticking: Promise<void> | null = null
  private again = false
  /** The replays this process holds, as of their last lease or step. */
  private held: LeasedReplay[] = []
  /** Steps failed in a row, per replay. */
  private readonly failures = new Map<string, number>()
  /** Per destination: how fast its replays may go beside its live traffic (replay-pace.ts). */
  private readonly pacing = new Map<string, ReplayPace>()
  /** When the leases are renewed (and new or orphaned replays looked for) next. */
  private leaseAt = 0
  private unwatch: Promise<(() => Promise<void>) | undefined> | undefined

  constructor(options: ReplayRunnerOptions) {
    this.store = options.store
    this.logger = options.logger
    this.metrics = options.metrics ?? NO_METRICS
    this.leaseMs = options.leaseMs ?? 15_000
    this.stepSize = options.stepSize ?? 200
    this.maxOutstanding = options.maxOutstanding ?? 32
    this.pollMs = options.pollMs ?? 250
    this.holdMs = options.holdMs ?? 10_000
  }

  start(): void {
    if (this.running) return
    this.running = true
    // New replays and finished deliveries (room for the next step) are announced as `deliveries`.
    this.unwatch = this.store
      .watch((event) => {
        if (event === 'deliveries' && this.held.length > 0) this.wake()
      })
      .catch(() => undefined)
    this.wake()
  }

  async stop(): Promise<void> {
    this.running = false
    clearTimeout(this.timer)
    clearTimeout(this.pacedTimer)
    const unwatch = await this.unwatch
    await unwatch?.()
    await this.ticking
  }

  /** A replay was created (in this process): lease it now rather than at the next poll. */
  replayCreated(): void {
    this.leaseAt = 0
    this.wake()
  }

  /** Takes the next steps soon; calls made while a round runs start one more round after it. */
  wake(): void {
    if (!this.running) return
    if (this.ticking) {
      this.again = true
      return
    }
    clearTimeout(this.timer)
    this.ticking = this.round().finally(() => {
      this.ticking = null
      if (!this.running) return
      const soon = this.again
      this.again = false
      this.timer = setTimeout(() => this.wake(), soon ? 0 : this.pollMs)
      this.timer.unref()
    })
  }

  /** One step of every replay this process holds; another round at once when any moved. */
  private async round(): Promise<void> {
    try {
      const now = Date.now()
      // Leases are renewed a few times per lease, not every round: a round runs after every commit.
      if (now >= this.leaseAt) {
        this.held = await this.store.leaseReplays(this.runnerId, now, now + this.leaseMs)
        this.leaseAt = now + Math.min(this.pollMs, this.leaseMs / 3)
      }
      for (const replay of [...this.held]) {
        if (!this.running) return
        if (await this.advanceOrFail(replay)) this.again = true
      }
    } catch (error) {
      this.logger.error({ err: error }, 'replay runner: a round failed; trying again shortly')
    }
  }

  /**
   * `advance`, counting its failures: a replay whose steps fail `MAX_FAILED_STEPS` times in a row (not
   * an outage of the store, which is retried for as long as it lasts) is FAILED with the reason.
   */
  private async advanceOrFail(replay: LeasedReplay): Promise<boolean> {
    try {
      const moved = await this.advance(replay)
      this.failures.delete(replay.id)
      return moved
    } catch (error) {
      if (isStoreUnavailable(error)) throw error
      const failures = (this.failures.get(replay.id) ?? 0) + 1
      this.failures.set(replay.id, failures)
      this.logger.warn({ err: error, replayId: replay.id, failures }, 'replay step failed')
      if (failures < MAX_FAILED_STEPS) return false
      this.failures.delete(replay.id)
      await this.store.failReplay(replay.id, (error as Error).message, Date.now())
      this.drop(replay)
      return false
    }
  }

  /** One step of one replay; true when it moved (more may follow at once). */
  private async advance(replay: LeasedReplay): Promise<boolean> {
    const now = Date.now()
    const outstanding = await this.store.replayOutstanding(replay.id)
    if (replay.scanDone) {
      if (outstanding === 0 && (await this.store.finishReplay(replay.id, this.runnerId, now))) {
        this.logger.info({ replayId: replay.id }, 'replay finished')
        this.drop(replay)
      }
      return false
    }
    const destination = await this.store.getDestination(replay.destinationId)
    if (destination === null) {
      this.drop(replay) // deleted: its replays went with it
      return false
    }
    // Room for a step that is worth its commit, and nothing live waiting to be claimed.
    let pace = this.pacing.get(destination.id)
    if (pace === undefined) {
      pace = new ReplayPace()
      this.pacing.set(destination.id, pace)
    }
    const limit = this.outstandingLimit(destination)
    if (limit - outstanding < limit / 4) return false
    const room = Math.min(this.stepSize, limit - outstanding)
    if (await this.store.liveWorkDue(destination.id, now, destination.settings.batching !== undefined)) {
      pace.liveSeen(now)
      return false
    }
    const { read, retryAt } = pace.allowance(now, room)
    if (retryAt !== null) {
      this.wakeAt(retryAt)
      return false
    }
    // Up to `stepSize` calls are read, and taken until `read` of them matched: a window the filters
    // mostly leave out is read quickly, while the deliveries a step creates stay within the room.
    // We MUST NOT read the last `holdMs`: a call received then may still commit behind the cursor.
    const readable = Math.min(replay.to, now - this.holdMs)
    const calls = await this.store.replayCandidates(replay, readable, this.stepSize)
    const matched: number[] = []
    let taken = 0
    for (const call of calls) {
      if (matched.length === read) break
      taken++
      if (replayMatches(replay, destination, call.payload)) matched.push(call.pk)
    }
    const last = calls[taken - 1]
    // Every call readable now was read; a window reaching into the future (or into the hold) is read
    // again until its end is readable.
    const starved = taken === calls.length && calls.length < this.stepSize
    const scanDone = starved && readable === replay.to
    if (last === undefined && !scanDone) return false
    const to = last === undefined ? replay.cursor : { receivedAt: last.receivedAt, pk: last.pk }
    const result = await this.store.commitReplayStep({
      replayId: replay.id,
      runner: this.runnerId,
      from: replay.cursor,
      to,
      scanDone,
      scanned: taken,
      matched,
      leaseUntil: Date.now() + this.leaseMs,
    })
    if (result === null) {
      this.drop(replay) // cancelled, or no longer ours
      return false
    }
    replay.cursor = to
    replay.scanDone = scanDone
    pace.stepped(Date.now(), result.enqueued, starved)
    this.metrics.replayed(destination.id, 'enqueued', result.enqueued)
    this.metrics.replayed(destination.id, 'skipped', result.skipped)
    return true
  }

  /** A round at `at` (a paced step's time), unless one comes sooner. */
  private wakeAt(at: number): void {
    clearTimeout(this.pacedTimer)
    this.pacedTimer = setTimeout(() => this.wake(), Math.max(0, at - Date.now()))
    this.pacedTimer.unref()
  }

  private drop(replay: LeasedReplay): void {
    this.held = this.held.filter((held) => held.id !== replay.id)
  }

  private outstandingLimit(destination: Destination): number {
    const batching = destination.settings.batching
    return batching === undefined
      ? this.maxOutstanding
      : Math.max(this.maxOutstanding, Math.min(2 * batching.maxEvents, 4_000))
  }
}
