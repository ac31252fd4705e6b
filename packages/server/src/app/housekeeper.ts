import type { Logger } from '../lib/logger.ts'
import type { Store } from '../store/store.ts'

/**
 * Runs retention and the delivery roll-ups (the charts' per-minute figures) in the background, once a
 * minute (and once shortly after start).
 */
export class Housekeeper {
  private timer: NodeJS.Timeout | undefined
  private firstRun: NodeJS.Timeout | undefined
  private readonly store: Store
  private readonly logger: Logger
  private readonly retentionMs: number
  private readonly intervalMs: number

  constructor(store: Store, logger: Logger, options: { retentionMs: number; intervalMs?: number }) {
    this.store = store
    this.logger = logger
    this.retentionMs = options.retentionMs
    this.intervalMs = options.intervalMs ?? 60_000
  }

  start(): void {
    if (this.timer) return
    this.timer = setInterval(() => void this.runOnce(), this.intervalMs)
    this.timer.unref()
    this.firstRun = setTimeout(() => void this.runOnce(), 1_000)
    this.firstRun.unref()
  }

  stop(): void {
    clearInterval(this.timer)
    clearTimeout(this.firstRun)
    this.timer = undefined
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
