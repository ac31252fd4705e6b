import type { MessageRow, MessagesSql } from '../../tables/messages.ts'
import type { SqliteDatabase } from '../database.ts'
import { dedupeKey } from '../dedupe-key.ts'

/** messages, outside ingest (ingest.ts) and retention (sweep.ts). */
export function sqliteMessages(db: SqliteDatabase): MessagesSql {
  return {
    recent: (sourceIds, limit, from, to) =>
      db
        .sql(
          // Newest first by pk: the rowid order, read backwards, with no index of its own to keep up at ingest.
          `SELECT * FROM messages WHERE source_id IN (SELECT value FROM json_each(?1))
             AND received_at >= ?2 AND received_at < ?3 ORDER BY pk DESC LIMIT +?4`,
        )
        .all(JSON.stringify(sourceIds), from, to, limit) as unknown as MessageRow[],
    latest: (sourceId, messageId) =>
      db
        .sql(
          // By dedupe key, or by text among Sluice's own messages, stored without one (007_dedupe_key.sql).
          `SELECT * FROM messages WHERE dedupe_key = ?1 AND source_id = ?2 AND message_id = ?3
           UNION ALL SELECT * FROM messages WHERE dedupe_key IS NULL AND source_id = ?2 AND message_id = ?3
           ORDER BY pk DESC LIMIT 1`,
        )
        .get(dedupeKey(sourceId, messageId), sourceId, messageId) as MessageRow | undefined,
    count: (sourceId) =>
      (
        (sourceId === undefined
          ? db.sql('SELECT COUNT(*) AS n FROM messages').get()
          : db.sql('SELECT COUNT(*) AS n FROM messages WHERE source_id = ?').get(sourceId)) as { n: number }
      ).n,
  }
}
