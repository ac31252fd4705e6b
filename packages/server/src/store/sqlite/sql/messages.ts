import type { MessageRow } from '../../core/rows.ts'
import type { MessagesSql } from '../../core/store-sql.ts'
import type { SqliteDatabase } from '../database.ts'

/** messages, outside ingest (ingest.ts) and retention (sweep.ts). */
export function sqliteMessages(db: SqliteDatabase): MessagesSql {
  return {
    latest: (sourceId, messageId) =>
      db
        .sql('SELECT * FROM messages WHERE source_id = ? AND message_id = ? ORDER BY pk DESC LIMIT 1')
        .get(sourceId, messageId) as MessageRow | undefined,
    count: (sourceId) =>
      (
        (sourceId === undefined
          ? db.sql('SELECT COUNT(*) AS n FROM messages').get()
          : db.sql('SELECT COUNT(*) AS n FROM messages WHERE source_id = ?').get(sourceId)) as { n: number }
      ).n,
  }
}
