/**
 * Deliveries (or batches) whose outcome this engine has settled, remembered until no claim can still
 * bring back a row read before that outcome was recorded. Such a row has its lease run out (the store
 * was held up past it) and, if taken, would be sent a second time.
 *
 * Every recorded outcome adds one to the attempt count, so an entry is the id with the count it was
 * claimed at: a claim returning that count read the row before the record (drop it: the record
 * settles it); a higher count was read after the record (a retry now due: take it at once).
 *
 * When may an entry go? Not simply when its commit returns. On PostgreSQL a claim runs on another
 * connection: its statement may read the row before the commit and its answer still arrive after the
 * commit's. So a recorded entry is forgotten only once every claim started before the commit returned
 * has ended. A claim started after that reads the committed row. (On SQLite answers come in the order
 * the calls were made, so the wait is only ever for claims made after the commit: harmless.)
 *
 * One entry an id: settling a delivery again replaces its entry, even one still waiting. That is safe
 * because a destination never has two claims at once (`slot.claiming`): the claim that took the
 * delivery again has ended, so no claim still running read it before the earlier record.
 */
export class SettledOutcomes {
  /** Id → the attempt count it was claimed at. */
  private readonly settled = new Map<number, number>()
  /** Claims started so far: each claim's number. */
  private claimsStarted = 0
  private readonly claimsRunning = new Set<number>()
  /** Recorded entries waiting for the claims numbered up to `after` to end, oldest first. */
  private waiting: { id: number; attemptCount: number; after: number }[] = []

  /** An outcome of `id`, claimed at `attemptCount`, is settled and not yet recorded. */
  settle(id: number, attemptCount: number): void {
    this.settled.set(id, attemptCount)
  }

  /** Whether a claim's row (`id` at `attemptCount`) was read before an outcome settled here was recorded. */
  has(id: number, attemptCount: number): boolean {
    return this.settled.get(id) === attemptCount
  }

  /**
   * Runs `claim` as one claim: the store call and the check of the rows it returns with `has`, which
   * MUST happen inside it (an outcome recorded meanwhile is forgotten only once it ends).
   */
  async claiming<T>(claim: () => Promise<T>): Promise<T> {
    const number = this.claimStarted()
    try {
      return await claim()
    } finally {
      this.claimEnded(number)
    }
  }

  /** Call before a claim goes to the store; pass the answer to `claimEnded` once its rows are checked. */
  claimStarted(): number {
    this.claimsStarted++
    this.claimsRunning.add(this.claimsStarted)
    return this.claimsStarted
  }

  /** The claim numbered `claim` has returned, and its rows were checked with `has`. */
  claimEnded(claim: number): void {
    this.claimsRunning.delete(claim)
    if (this.waiting.length === 0) return
    let oldestRunning = Number.POSITIVE_INFINITY
    for (const running of this.claimsRunning) oldestRunning = Math.min(oldestRunning, running)
    let done = 0
    while (done < this.waiting.length && this.waiting[done]!.after < oldestRunning) {
      const { id, attemptCount } = this.waiting[done]!
      this.forget(id, attemptCount)
      done++
    }
    if (done > 0) this.waiting = this.waiting.slice(done)
  }

  /** The commit of an outcome settled at `attemptCount` returned (recorded, or failed: then it is sent again when its lease runs out). */
  recorded(id: number, attemptCount: number): void {
    if (this.claimsRunning.size === 0) this.forget(id, attemptCount)
    else this.waiting.push({ id, attemptCount, after: this.claimsStarted })
  }

  /** Unless it was sent again meanwhile (settled at another count, not recorded yet). */
  private forget(id: number, attemptCount: number): void {
    if (this.settled.get(id) === attemptCount) this.settled.delete(id)
  }
}
