import type { MessageRow, MessagesSql } from '../../tables/messages.ts'
import type { SqliteDatabase } from '../database.ts'
import { dedupeKey } from '../dedupe-key.ts'

/** messages, outside ingest (ingest.ts) and retention (sweep.ts). */
export function sqliteMessages(db: SqliteDatabase): MessagesSql {
  return {
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
