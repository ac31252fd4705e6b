import { unref } from './timers.ts'

/**
 * Flushes the open batch `interval` ms after its first message was queued. One timer at a time,
 * armed when a batch opens, never per message; unref'd so it never keeps a process alive by itself.
 */
export class FlushTimer {
  private handle: ReturnType<typeof setTimeout> | undefined
  private readonly interval: number
  /** When the open batch started, or undefined when nothing is waiting. */
  private readonly openedAt: () => number | undefined
  private readonly onDue: () => void

  constructor(interval: number, openedAt: () => number | undefined, onDue: () => void) {
    this.interval = interval
    this.openedAt = openedAt
    this.onDue = onDue
  }

  /** Starts the timer unless it is already running. */
  arm(delay: number = this.interval): void {
    if (this.handle !== undefined) return
    this.handle = setTimeout(this.fire, delay)
    unref(this.handle)
  }

  stop(): void {
    if (this.handle !== undefined) clearTimeout(this.handle)
    this.handle = undefined
  }

  private readonly fire = (): void => {
    this.handle = undefined
    const openedAt = this.openedAt()
    if (openedAt === undefined) return
    // The batch that armed the timer may have been sealed by count since; wait for the current one.
    const wait = openedAt + this.interval - Date.now()
    if (wait > 0) this.arm(wait)
    else this.onDue()
  }
}
