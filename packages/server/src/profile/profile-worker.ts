/**
 * Keeps profiles current: consumes committed messages into profiles (Store.consumeIntoProfiles) batch
 * after batch until none are left, then waits for the next commit or poll. Each batch commits with the
 * cursor, so stopping or crashing at any point loses nothing and repeats nothing.
 */
import type { Logger } from '../lib/logger.ts'
import type { Store } from '../store/store.ts'

export interface ProfileWorkerOptions {
  store: Store
  logger: Logger
  /**
   * How often an idle worker looks for new messages, in ms. Default 250. Commits that create
   * deliveries wake it at once; this catches the rest (messages routed nowhere, other processes').
   */
  pollMs?: number
  /** Messages per transaction. Default 500. */
  batchSize?: number
}

/** After a failed batch (store unreachable, say), wait this long before trying again. */
const RETRY_AFTER_ERROR_MS = 1_000

export class ProfileWorker {
  private readonly store: Store
  private readonly logger: Logger
  private readonly pollMs: number
  private readonly batchSize: number
  private running: Promise<void> | null = null
  private stopped = true
  private wake: (() => void) | null = null
  private unwatch: (() => Promise<void>) | null = null

  constructor(options: ProfileWorkerOptions) {
    this.store = options.store
    this.logger = options.logger
    this.pollMs = options.pollMs ?? 250
    this.batchSize = options.batchSize ?? 500
  }

  async start(): Promise<void> {
    if (!this.stopped) return
    this.stopped = false
    this.unwatch = await this.store.watch((event) => {
      if (event === 'deliveries') this.wake?.()
    })
    this.running = this.loop()
  }

  /** Finishes the batch in progress (if any) and stops. */
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
      try {
        if ((await this.store.consumeIntoProfiles(this.batchSize)) > 0) continue
      } catch (error) {
        this.logger.warn({ err: error }, 'profiles: consuming messages failed; retrying')
        pause = RETRY_AFTER_ERROR_MS
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pause)
        this.wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      this.wake = null
    }
  }
}
