/**
 * Erases what deletion requests left to erase, one batch per transaction, and brings the requests'
 * statuses up to date. Its state is the store's (`erasure_pending`), so a restart simply carries on;
 * on PostgreSQL every process may run it, and the store hands each request to one of them at a time.
 *
 * Batches keep a large erasure (100,000 calls of one user) from holding the store, and a pause after
 * each batch, in proportion to how long it took, keeps erasure to a small share of the store's time:
 * ingest and delivery commits go on at nearly their usual rate while a user is erased.
 */

import type { HealthStore } from '../domain/health-store.ts'
import { type ErasureStep, failedErasure, type PrivacyStore } from '../domain/privacy-store.ts'
import type { Logger } from '../lib/logger.ts'
import type { StoreWatch } from '../store/store.ts'
import { settleRegulations } from './regulation-settling.ts'

export interface ErasureRunnerOptions {
  /** Messages erased per transaction. Default 1,000. */
  batchSize?: number
  /** How often to look for work and settle statuses when nothing is announced. Default 1 s. */
  intervalMs?: number
  /**
   * The most of the store's time erasure may take: after a batch that took t ms the runner waits
   * t × (1 − share) / share. Default 0.1 (a 10 ms batch of 1,000, then 90 ms for everyone else).
   */
  storeShare?: number
}

export class ErasureRunner {
  private readonly store: PrivacyStore & HealthStore & StoreWatch
  private readonly logger: Logger
  private readonly batchSize: number
  private readonly intervalMs: number
  private readonly pauseFactor: number
  private running = false
  private working: Promise<void> | null = null
  private again = false
  private timer: NodeJS.Timeout | undefined
  private unwatch: (() => Promise<void>) | undefined

  constructor(
    store: PrivacyStore & HealthStore & StoreWatch,
    logger: Logger,
    options: ErasureRunnerOptions = {},
  ) {
    this.store = store
    this.logger = logger
    this.batchSize = options.batchSize ?? 1_000
    this.intervalMs = options.intervalMs ?? 1_000
    const share = options.storeShare ?? 0.1
    this.pauseFactor = (1 - share) / share
  }

  async start(): Promise<void> {
    if (this.running) return
    this.running = true
    // New requests, and deliveries settling (statuses follow them), are announced as `privacy` and
    // `deliveries`; the timer covers outcomes, which are not announced.
    this.unwatch = await this.store.watch((event) => {
      if (event === 'privacy') this.wake()
    })
    this.timer = setInterval(() => this.wake(), this.intervalMs)
    this.timer.unref()
    this.wake()
  }

  async stop(): Promise<void> {
    this.running = false
    clearInterval(this.timer)
    await this.unwatch?.()
    await this.working
  }

  /** Runs a pass soon; a call during a pass makes one more pass after it. */
  wake(): void {
    if (!this.running) return
    if (this.working) {
      this.again = true
      return
    }
    this.working = this.work().finally(() => {
      this.working = null
      if (this.again) {
        this.again = false
        this.wake()
      }
    })
  }

  /**
   * One pass: erase messages, then profiles, then settle statuses. Each part runs whatever became of
   * the others, so statuses keep settling (and deliveries' notifications keep counting) while an
   * erasure fails and is retried on the next pass.
   */
  private async work(): Promise<void> {
    const attempt = async (part: string, run: () => Promise<unknown>) => {
      try {
        await run()
      } catch (error) {
        this.logger.error({ err: error }, `privacy: ${part} failed; retrying shortly`)
      }
    }
    await attempt('erasure', async () => {
      // Requests whose batch failed in this pass: passed over until the next, so they hold up no other.
      const failed: string[] = []
      for (;;) {
        if (!this.running) return
        const started = performance.now()
        let step: ErasureStep | null
        try {
          step = await this.store.eraseNext(this.batchSize, failed)
        } catch (error) {
          const regulationId = failedErasure(error)
          if (regulationId === null) throw error
          this.logger.error(
            { err: error, regulationId },
            'privacy: an erasure failed; retrying on the next pass',
          )
          failed.push(regulationId)
          continue
        }
        if (step === null) return
        if (step.done) this.logger.info({ regulationId: step.regulationId }, 'privacy: erasure finished')
        const pauseMs = (performance.now() - started) * this.pauseFactor
        await new Promise((resolve) => setTimeout(resolve, pauseMs))
      }
    })
    if (!this.running) return
    // After the messages: a profile erased before them could be rebuilt from them by the profile worker.
    await attempt('erasing profiles', () => this.store.eraseProfilesOfDeletions())
    await attempt('settling regulation statuses', () => settleRegulations(this.store, Date.now()))
  }
}
