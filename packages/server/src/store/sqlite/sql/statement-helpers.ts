import type { SqliteDatabase } from '../database.ts'

export type Param = string | number | null

/** Shorthands over the cached prepared statements: every row, or how many rows changed. */
export function statementHelpers(db: SqliteDatabase) {
  return {
    all: <Row>(text: string, ...params: Param[]) => db.sql(text).all(...params) as Row[],
    run: (text: string, ...params: Param[]) => Number(db.sql(text).run(...params).changes),
  }
}

/**
 * Queues (again) the profiles in the JSON array parameter for computed-trait evaluation. A new entry
 * starts again at seq 1: one process, with one profile worker, evaluates a SQLite file, so no other
 * evaluation can remove an entry between this one's read and its commit. (PostgreSQL, with several
 * evaluating processes, draws every seq from a sequence instead.)
 */
export const QUEUE_PROFILES = `INSERT INTO profile_dirty (profile_id, seq) SELECT value, 1 FROM json_each(?) WHERE true
  ON CONFLICT (profile_id) DO UPDATE SET seq = profile_dirty.seq + 1`
