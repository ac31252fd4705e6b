import type { MessageRow, MessagesSql } from '../../tables/messages.ts'
import type { SqliteDatabase } from '../database.ts'
import { dedupeKey } from '../dedupe-key.ts'

/**
 * The newest messages of some sources in a window, newest first (the dry run's calls). It reads
 * messages_by_received (whose entries end in the rowid) backwards and stops at the limit. Ordered by pk
 * alone, SQLite took that index for the time range and then sorted every message in it, so a dry run
 * over 10,000 calls cost time in proportion to all the messages stored (585 ms against 18 ms with
 * 600,000 stored). A test checks the plan sorts nothing.
 */
export const RECENT_MESSAGES = `SELECT * FROM messages WHERE source_id IN (SELECT value FROM json_each(?1))
  AND received_at >= ?2 AND received_at < ?3 ORDER BY received_at DESC, pk DESC LIMIT +?4`

/** messages, outside ingest (ingest.ts) and retention (sweep.ts). */
export function sqliteMessages(db: SqliteDatabase): MessagesSql {
  return {
    recent: (sourceIds, limit, from, to) =>
      db.sql(RECENT_MESSAGES).all(JSON.stringify(sourceIds), from, to, limit) as unknown as MessageRow[],
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
