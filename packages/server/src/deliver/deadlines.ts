/**
 * Deadlines for many concurrent attempts with one timer, instead of one timer (and one
 * AbortController) per request: at thousands of requests per second, arming and clearing a timer
 * for each was a measurable share of the delivery thread.
 *
 * Every entry of one list waits the same `waitMs` from the moment it is added, so entries expire in
 * the order they were added: the list is a FIFO (an intrusive doubly linked list, so removing a
 * settled entry is O(1) and allocates nothing). One timer is armed for the oldest entry. It is not
 * re-armed when entries are removed: when it fires it expires what is due and re-arms for the new
 * oldest entry, so a list whose entries settle in time costs about one timer callback per `waitMs`.
 *
 * Deadlines are on the monotonic clock (`performance.now()`), so a wall-clock step cannot fire or
 * hold back a timeout. The timer is unref'd: an entry always belongs to a request whose socket (or
 * pending connection) keeps the process alive.
 */

export interface DeadlineEntry {
  /** `performance.now()` at which the entry expires; set by `add`. */
  deadline: number
  /** Links and membership, owned by the list; null when the entry is in no list. */
  newer: DeadlineEntry | null
  older: DeadlineEntry | null
  listedIn: object | null
}

/** `onExpired` must not throw: it runs inside the timer, ahead of the other due entries. */
export class DeadlineList<T extends DeadlineEntry> {
  readonly waitMs: number
  readonly #onExpired: (entry: T) => void
  #oldest: T | null = null
  #newest: T | null = null
  #timer: NodeJS.Timeout | undefined
  /** When the armed timer fires; Infinity when none is armed. */
  #timerAt = Number.POSITIVE_INFINITY

  constructor(waitMs: number, onExpired: (entry: T) => void) {
    this.waitMs = waitMs
    this.#onExpired = onExpired
  }

  /** Starts `entry`'s wait now. It must not be in a list. */
  add(entry: T, now: number = performance.now()): void {
    entry.deadline = now + this.waitMs
    entry.listedIn = this
    entry.newer = null
    entry.older = this.#newest
    if (this.#newest) this.#newest.newer = entry
    else this.#oldest = entry
    this.#newest = entry
    if (this.#timerAt === Number.POSITIVE_INFINITY) this.#arm(entry.deadline, now)
  }

  /** Takes `entry` out (it settled in time). Harmless if it is not in this list. */
  remove(entry: T): void {
    if (entry.listedIn !== this) return
    entry.listedIn = null
    if (entry.older) entry.older.newer = entry.newer
    else this.#oldest = entry.newer as T | null
    if (entry.newer) entry.newer.older = entry.older
    else this.#newest = entry.older as T | null
    entry.newer = null
    entry.older = null
  }

  /** Stops the timer and drops every entry: none of them will expire. */
  clear(): void {
    clearTimeout(this.#timer)
    this.#timerAt = Number.POSITIVE_INFINITY
    for (let entry = this.#oldest; entry !== null; entry = this.#oldest) this.remove(entry)
  }

  #arm(at: number, now: number): void {
    this.#timerAt = at
    // +1: Node's timers count whole milliseconds from their own clock and may fire a fraction early.
    this.#timer = setTimeout(this.#fire, Math.max(1, Math.ceil(at - now) + 1))
    this.#timer.unref()
  }

  readonly #fire = (): void => {
    this.#timerAt = Number.POSITIVE_INFINITY
    const now = performance.now()
    let entry = this.#oldest
    while (entry !== null && entry.deadline <= now) {
      this.remove(entry)
      this.#onExpired(entry)
      entry = this.#oldest
    }
    if (entry !== null) this.#arm(entry.deadline, now)
  }
}
