import type { SourceStats } from '../../../domain/sources.ts'
import type { SourceRow, SourcesSql } from '../../tables/sources.ts'
import { flag, type SqliteDatabase } from '../database.ts'

/** sources, with their counters (accepted_count, duplicate_count, rejected_count columns). */
export function sqliteSources(db: SqliteDatabase): SourcesSql {
  const one = (text: string, ...params: (string | number | null)[]) =>
    db.sql(text).get(...params) as SourceRow | undefined
  return {
    insert: (source) =>
      one(
        'INSERT INTO sources (id, name, write_key, write_key_hash, enabled, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *',
        source.id,
        source.name,
        source.write_key,
        source.write_key_hash,
        flag(source.enabled),
        source.created_at,
      )!,
    list: () => db.sql('SELECT * FROM sources ORDER BY created_at, id').all() as unknown as SourceRow[],
    get: (id) => one('SELECT * FROM sources WHERE id = ?', id),
    getByWriteKeyHash: (hash) => one('SELECT * FROM sources WHERE write_key_hash = ?', hash),
    replaceWriteKey: (id, from, to, hash) =>
      db
        .sql('UPDATE sources SET write_key = ?, write_key_hash = ? WHERE id = ? AND write_key = ?')
        .run(to, hash, id, from).changes > 0,
    update: (id, change) =>
      one(
        `UPDATE sources SET name = COALESCE(?, name), enabled = COALESCE(?, enabled),
           write_key = COALESCE(?, write_key), write_key_hash = COALESCE(?, write_key_hash)
         WHERE id = ? RETURNING *`,
        change.name,
        change.enabled === null ? null : flag(change.enabled),
        change.writeKey?.stored ?? null,
        change.writeKey?.hash ?? null,
        id,
      ),
    // Messages cascade to deliveries and attempts; connections cascade from sources.
    delete: (id) => db.sql('DELETE FROM sources WHERE id = ?').run(id).changes > 0,
    stats: (id) =>
      db
        .sql(
          `SELECT accepted_count AS accepted, duplicate_count AS duplicates, rejected_count AS rejected,
             suppressed_count AS suppressed FROM sources WHERE id = ?`,
        )
        .get(id) as SourceStats | undefined,
    countRejected(id, count) {
      db.sql('UPDATE sources SET rejected_count = rejected_count + ? WHERE id = ?').run(count, id)
    },
    countSuppressed(id, count) {
      db.sql('UPDATE sources SET suppressed_count = suppressed_count + ? WHERE id = ?').run(count, id)
    },
  }
}
