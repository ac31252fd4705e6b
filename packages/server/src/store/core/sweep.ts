/**
 * Retention: old messages whose deliveries are all final go, with their deliveries and attempts; so do
 * dedupe keys past the window, and PostgreSQL's settled shard rows of per-minute figures. The loop is
 * written once here; each backend provides its statements (`SweepSql`).
 */
import type { Awaitable } from '../tables/sql-types.ts'

export interface SweepSql {
  /**
   * Runs `work` unless another process is sweeping the same database right now (PostgreSQL: an
   * advisory lock), in which case it resolves with null at once.
   */
  exclusive<T>(work: (statements: SweepStatements) => Promise<T>): Promise<T | null>
}

export interface SweepStatements {
  /**
   * Lets the store's other work run between two chunks (SQLite's store worker answers one call at a
   * time: without it, a sweep of many chunks would hold up ingest and deliveries for all of them).
   */
  between?(): Promise<void>
  /** Up to `limit` messages by pk order, after `afterPk`. */
  messagesAfter(afterPk: number, limit: number): Awaitable<{ pk: number; received_at: number }[]>
  /**
   * Deletes those of these messages whose deliveries are all final and which profiles have consumed
   * (pk at most the profile cursor's high-water mark), with them; returns how many went.
   */
  deleteIfFinal(pks: number[]): Awaitable<number>
  /** Deletes final batches whose members all went (with their attempts). */
  dropEmptyBatches(): Awaitable<void>
  /**
   * Deletes up to `limit` dedupe keys received before `before`; returns how many. Only PostgreSQL
   * keeps keys apart from messages (its `dedupe_keys`); SQLite dedupes against messages and has none.
   */
  expireDedupeKeys(before: number, limit: number): Awaitable<number>
  /**
   * Adds the shard rows of per-minute source figures for minutes before `before` into one row per
   * source and minute; returns how many rows went. Only PostgreSQL writes figures to several shards
   * (so that concurrent ingests do not queue on one row); SQLite has one row a minute and none.
   */
  foldRollupShards?(before: number): Awaitable<number>
}

/** Rows deleted per statement, so a large clean-up never holds locks (or SQLite's write lock) for long. */
const SWEEP_CHUNK = 5_000

/**
 * Minutes older than this get no more calls (an ingest counts its calls in the minute it received
 * them, and commits within its statement timeout), so their shard rows can be added into one.
 */
const ROLLUP_SETTLED_MS = 3_600_000

/**
 * Retention: deletes messages received before `olderThan` whose deliveries are all final (with those
 * deliveries and their attempts), then dedupe keys past the window.
 */
export async function sweep(
  sql: SweepSql,
  olderThan: number,
  dedupeWindowMs: number,
): Promise<{ messages: number }> {
  const swept = await sql.exclusive(async (statements) => {
    // Walk pk order from the oldest and stop at the first young message: pk grows with received_at
    // (with several PostgreSQL processes only roughly; a straggler is simply taken next time).
    let messages = 0
    let cursor = 0
    for (;;) {
      const rows = await statements.messagesAfter(cursor, SWEEP_CHUNK)
      const expired = rows.filter((row) => row.received_at < olderThan).map((row) => row.pk)
      if (expired.length > 0) messages += await statements.deleteIfFinal(expired)
      if (rows.length < SWEEP_CHUNK || expired.length < rows.length) break
      cursor = rows.at(-1)!.pk
      await statements.between?.()
    }
    if (messages > 0) await statements.dropEmptyBatches()
    // Dedupe keys go once older than the window (they only matter inside it), and in any case once
    // older than retention (the caller's contract: retention covers every window it uses).
    const keysBefore = Math.max(olderThan, Date.now() - dedupeWindowMs)
    while ((await statements.expireDedupeKeys(keysBefore, SWEEP_CHUNK)) === SWEEP_CHUNK) {
      await statements.between?.()
    }
    // A busy source's per-minute figures take up to one row per shard a minute; once no ingest can
    // add to a minute any more, one row a minute is enough (a year of a source: ~525,000 rows).
    await statements.foldRollupShards?.(Date.now() - ROLLUP_SETTLED_MS)
    return { messages }
  })
  return swept ?? { messages: 0 }
}
