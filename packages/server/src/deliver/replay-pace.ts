/**
 * How fast a destination's replay may go beside live traffic. Alone, a replay goes as fast as its
 * steps and the destination allow, and that rate is measured (its idle throughput). While live calls
 * flow to the destination (live work was seen due within the last second), its steps are paced to
 * `SHARE` of that idle rate, in small steps (a token bucket with a few milliseconds' burst): the rest
 * of the machine, the store and the receiver stay with the live deliveries, and the replay still
 * moves at more than half its idle speed.
 */

/** Live work seen this recently: live traffic is flowing. */
const LIVE_MEMORY_MS = 1_000
/** Beside live traffic, the share of the idle rate a replay takes. */
const SHARE = 0.75
/** The idle rate is measured over windows this long of steps following each other. */
const WINDOW_MS = 1_000
/** A gap this long between steps starts a new window (the replay was waiting, not working). */
const GAP_MS = 500
/** The smallest paced step worth its commit. */
const MIN_STEP = 8
/** The burst the bucket holds, in time at the paced rate. */
const BURST_MS = 40

export class ReplayPace {
  #liveSeenAt = Number.NEGATIVE_INFINITY
  /** Messages/s enqueued while no live traffic flowed; null until measured. */
  #idleRate: number | null = null
  #windowStart = 0
  #windowCount = 0
  #steppedAt = Number.NEGATIVE_INFINITY
  #tokens = 0
  #tokensAt = 0

  /** The destination had live work due. */
  liveSeen(now: number): void {
    this.#liveSeenAt = now
  }

  /** The measured idle rate (messages/s), for logs and tests. */
  get idleRate(): number | null {
    return this.#idleRate
  }

  /** How many calls the next step may read now, at most `room`; when 0, when to ask again. */
  allowance(now: number, room: number): { read: number; retryAt: number | null } {
    if (!this.#paced(now)) return { read: room, retryAt: null }
    const perMs = (SHARE * this.#idleRate!) / 1_000
    const burst = Math.max(MIN_STEP, perMs * BURST_MS)
    this.#tokens = Math.min(burst, this.#tokens + (now - this.#tokensAt) * perMs)
    this.#tokensAt = now
    const want = Math.min(room, MIN_STEP)
    if (this.#tokens >= want) return { read: Math.min(room, Math.floor(this.#tokens)), retryAt: null }
    return { read: 0, retryAt: now + Math.ceil((want - this.#tokens) / perMs) }
  }

  /**
   * A step committed, having enqueued `enqueued` deliveries. `starved`: it read every call there was to
   * read for now (the window's end, or the calls too recent to read yet), so it waited for calls rather
   * than for the destination, and says nothing of the replay's rate.
   */
  stepped(now: number, enqueued: number, starved = false): void {
    const paced = this.#paced(now)
    if (paced) this.#tokens -= enqueued
    if (paced || starved) {
      // Neither a paced step nor one that waited for calls measures what the replay can do alone.
      this.#windowCount = 0
      this.#windowStart = now
    } else {
      if (now - this.#steppedAt > GAP_MS) {
        this.#windowStart = this.#steppedAt === Number.NEGATIVE_INFINITY ? now : this.#steppedAt
        this.#windowCount = 0
      }
      this.#windowCount += enqueued
      const elapsed = now - this.#windowStart
      if (elapsed >= WINDOW_MS) {
        // A window whose calls were all skipped (the destination had them) measured no sending at
        // all; a rate of 0 would stop a paced replay for good.
        if (this.#windowCount > 0) {
          const rate = (this.#windowCount * 1_000) / elapsed
          this.#idleRate = this.#idleRate === null ? rate : (this.#idleRate + rate) / 2
        }
        this.#windowStart = now
        this.#windowCount = 0
      }
    }
    this.#steppedAt = now
  }

  /** Paced: live traffic flows and the idle rate is known (until then the replay measures it). */
  #paced(now: number): boolean {
    return this.#idleRate !== null && now - this.#liveSeenAt < LIVE_MEMORY_MS
  }
}
