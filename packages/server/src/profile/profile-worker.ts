/**
 * Keeps profiles and computed traits current, in three steps that each commit on their own:
 * 1. consume committed messages into profiles (ProfileStore.consumeIntoProfiles), marking the profiles
 *    whose computed traits they may change;
 * 2. evaluate those profiles (ProfileStore.evaluateComputations): new values, and sync deliveries for
 *    changes;
 * 3. every `refreshMs`, queue the profiles whose calls left a `withinDays` window since the last check.
 * It works while there is work, then waits for the next commit or poll. Every step commits its
 * progress with its changes, so stopping or crashing at any point loses nothing and repeats nothing.
 */

import type { ProfileStore } from '../domain/profile-store.ts'
import type { Logger } from '../lib/logger.ts'
import type { StoreWatch } from '../store/store.ts'

export interface ProfileWorkerOptions {
  store: ProfileStore & StoreWatch
  logger: Logger
  /**
   * How often an idle worker looks for new messages, in ms. Default 250. This process's ingest commits
   * wake it at once; this catches other processes' (PostgreSQL).
   */
  pollMs?: number
  /** Messages (or queued profiles) per transaction. Default 500. */
  batchSize?: number
  /** How often time windows are re-checked, in ms. Default 60,000 (`SLUICE_AUDIENCE_REFRESH_SECONDS`). */
  refreshMs?: number
}

/**
 * After a step that found less than a batch of work, wait this long for more to gather, ms. Longer
 * measured dearer: calls an ingest commit hands over wait in memory until consumed, and held longer
 * they are promoted and collected as old objects.
 */
const GATHER_MS = 4

/** After a failed step (store unreachable, say), wait this long before trying again. */
const RETRY_AFTER_ERROR_MS = 1_000

export class ProfileWorker {
  private readonly store: ProfileStore & StoreWatch
  private readonly logger: Logger
  private readonly pollMs: number
  private readonly batchSize: number
  private readonly refreshMs: number
  private running: Promise<void> | null = null
  private stopped = true
  private wake: (() => void) | null = null
  private unwatch: (() => Promise<void>) | null = null
  /**
   * Window edges are checked from here on. It starts at 0 in each process, so the first check after a
   * start also covers any time the process was down.
   */
  private windowsCheckedUpTo = 0

  constructor(options: ProfileWorkerOptions) {
    this.store = options.store
    this.logger = options.logger
    this.pollMs = options.pollMs ?? 250
    this.batchSize = options.batchSize ?? 500
    this.refreshMs = options.refreshMs ?? 60_000
  }

  async start(): Promise<void> {
    if (!this.stopped) return
    this.stopped = false
    this.unwatch = await this.store.watch((event) => {
      if (event === 'messages' || event === 'deliveries') this.wake?.()
    })
    this.running = this.loop()
  }

  /** Finishes the step in progress (if any) and stops. */
  async stop(): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    this.wake?.()
    await this.running
    await this.unwatch?.()
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let pause = this.pollMs
      let wakeable = true
      const work = await this.step()
      if (work === 'full') continue
      // Some work, less than a batch: let a few more commits gather before the next step, so a busy
      // ingest feeds the worker batches rather than one transaction per commit.
      if (work === 'some') [pause, wakeable] = [GATHER_MS, false]
      if (work === 'failed') pause = RETRY_AFTER_ERROR_MS
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pause)
        this.wake = () => {
          if (!wakeable && !this.stopped) return
          clearTimeout(timer)
          resolve()
        }
      })
      this.wake = null
    }
  }

  /**
   * One step of each kind: consume, evaluate, and (when due) re-check windows. Each runs whatever
   * became of the others: a kind that keeps failing (store unreachable, say) holds up none of the rest.
   */
  private async step(): Promise<'full' | 'some' | 'none' | 'failed'> {
    let failed = false
    const attempt = async (kind: string, run: () => Promise<number>): Promise<number> => {
      try {
        return await run()
      } catch (error) {
        this.logger.warn({ err: error }, `profiles: ${kind} failed; retrying`)
        failed = true
        return 0
      }
    }
    const consumed = await attempt('consuming calls', () => this.store.consumeIntoProfiles(this.batchSize))
    const evaluated = await attempt(
      'evaluating computations',
      async () => (await this.store.evaluateComputations(this.batchSize)).evaluated,
    )
    if (consumed === this.batchSize || evaluated === this.batchSize) return 'full'
    let queued = 0
    const now = Date.now()
    if (now - this.windowsCheckedUpTo >= this.refreshMs) {
      queued = await attempt('re-checking time windows', async () => {
        const count = await this.store.queueWindowEdges(this.windowsCheckedUpTo, now)
        this.windowsCheckedUpTo = now
        return count
      })
    }
    if (failed) return 'failed'
    return consumed > 0 || evaluated > 0 || queued > 0 ? 'some' : 'none'
  }
}
