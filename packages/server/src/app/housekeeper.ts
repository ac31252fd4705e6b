import type { MessageStore } from '../domain/message-store.ts'
import type { SeriesStore } from '../domain/series-store.ts'
import type { Logger } from '../lib/logger.ts'

/**
 * Runs retention and the delivery roll-ups (the charts' per-minute figures) in the background, once a
 * minute (and once shortly after start).
 */
export class Housekeeper {
  private timer: NodeJS.Timeout | undefined
  /** The run in progress, so that stopping can wait for it before the store closes. */
  private running: Promise<unknown> | null = null
  private firstRun: NodeJS.Timeout | undefined
  private readonly store: MessageStore & SeriesStore
  private readonly logger: Logger
  private readonly retentionMs: number
  private readonly intervalMs: number

  constructor(
    store: MessageStore & SeriesStore,
    logger: Logger,
    options: { retentionMs: number; intervalMs?: number },
  ) {
    this.store = store
    this.logger = logger
    this.retentionMs = options.retentionMs
    this.intervalMs = options.intervalMs ?? 60_000
  }

  start(): void {
    if (this.timer) return
    this.timer = setInterval(() => this.runInBackground(), this.intervalMs)
    this.timer.unref()
    this.firstRun = setTimeout(() => this.runInBackground(), 1_000)
    this.firstRun.unref()
  }

  /** Stops the schedule; resolves once a run in progress has finished. */
  async stop(): Promise<void> {
    clearInterval(this.timer)
    clearTimeout(this.firstRun)
    this.timer = undefined
    await this.running
  }

  private runInBackground(): void {
    if (this.running) return // the previous run is still going: skip this turn
    this.running = this.runOnce().finally(() => {
      this.running = null
    })
  }

  async runOnce(now = Date.now()): Promise<{ messages: number }> {
    try {
      await this.store.rollUpDeliveries(now).catch((error: unknown) => {
        this.logger.error({ err: error }, 'delivery roll-up failed')
      })
      const swept = await this.store.sweep(now - this.retentionMs)
      if (swept.messages) this.logger.info(swept, 'retention sweep')
      return swept
    } catch (error) {
      this.logger.error({ err: error }, 'retention sweep failed')
      return { messages: 0 }
    }
  }
}
