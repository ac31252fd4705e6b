import type { SweepSql } from './store-sql.ts'

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
    }
    // Dedupe keys go once older than the window (they only matter inside it), and in any case once
    // older than retention (the caller's contract: retention covers every window it uses).
    const keysBefore = Math.max(olderThan, Date.now() - dedupeWindowMs)
    while ((await statements.expireDedupeKeys(keysBefore, SWEEP_CHUNK)) === SWEEP_CHUNK) {}
    // A busy source's per-minute figures take up to one row per shard a minute; once no ingest can
    // add to a minute any more, one row a minute is enough (a year of a source: ~525,000 rows).
    await statements.foldRollupShards?.(Date.now() - ROLLUP_SETTLED_MS)
    return { messages }
  })
  return swept ?? { messages: 0 }
}
