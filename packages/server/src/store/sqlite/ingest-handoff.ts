/**
 * The calls this store's ingest just committed, handed to the profile worker's next read of the
 * message log (sql/profiles.ts) so that it does not read back the rows it has just written: reading
 * them back was most of what the worker's read of the log cost the store thread.
 *
 * Only a fast path. The profile cursor in the database stays the truth: the worker asks for the calls
 * after its durable cursor, and gets them from here only when this hand-off holds exactly those, from
 * the one right after the cursor on, in an unbroken run of pks; otherwise (after a restart, while the
 * worker is further behind than this holds, or once another writer's row sits in between) it reads the
 * log as before. Rows never change once stored, so the only way a handed-over row can differ from the
 * log is by being gone (retention, an erasure, a deleted source, another connection): the reader
 * checks that every one of them is still there before using them (sql/profiles.ts).
 */
import type { MessageRow } from '../tables/messages.ts'

/**
 * Most rows held: four of the worker's default batches. A worker further behind reads the log, as it
 * would without the hand-off, and comes back to it once caught up.
 */
const MAX_ROWS = 2_000

export class IngestHandoff {
  #rows: MessageRow[] = []
  /** Rows before this index are consumed or given up. */
  #head = 0
  /** Set by the first read: until something consumes the log, ingest hands nothing over. */
  #reading = false

  /** Whether ingest should hand its rows over (something reads them). */
  get wanted(): boolean {
    return this.#reading
  }

  /** After an ingest transaction committed: the rows it stored, in pk order. */
  committed(rows: MessageRow[]): void {
    if (!this.#reading || rows.length === 0) return
    // Consumed rows are let go once they are half of what is held.
    if (this.#head > 0 && this.#head * 2 >= this.#rows.length) {
      this.#rows = this.#rows.slice(this.#head)
      this.#head = 0
    }
    for (const row of rows) this.#rows.push(row)
    // Beyond the bound, the oldest are given up: a worker that far behind reads the log.
    this.#head = Math.max(this.#head, this.#rows.length - MAX_ROWS)
  }

  /**
   * The rows with pks `afterPk + 1`, `afterPk + 2`, … (at most `limit`, stopping at the first pk not
   * held), or null when the first of them is not held. The caller checks they are still stored.
   */
  take(afterPk: number, limit: number): MessageRow[] | null {
    this.#reading = true
    const rows = this.#rows
    let at = this.#head
    while (at < rows.length && rows[at]!.pk <= afterPk) at++
    this.#head = at
    if (at === rows.length || rows[at]!.pk !== afterPk + 1) return null
    const taken: MessageRow[] = []
    for (let pk = afterPk + 1; at < rows.length && taken.length < limit && rows[at]!.pk === pk; at++, pk++) {
      taken.push(rows[at]!)
    }
    return taken
  }

  /** Forgets every row held (one of them is no longer stored). */
  clear(): void {
    this.#rows = []
    this.#head = 0
  }
}
