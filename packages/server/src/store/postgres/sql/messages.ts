import type { MessageRow, MessagesSql } from '../../tables/messages.ts'
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'

/** messages on PostgreSQL, outside ingest (ingest.ts) and retention (sweep.ts). */
export function postgresMessages(db: PostgresDatabase): MessagesSql {
  return {
    recent: (sourceIds, limit, from, to) =>
      db.query<MessageRow>(
        `SELECT * FROM messages WHERE source_id = ANY ($1::text[]) AND received_at >= $2 AND received_at < $3
         ORDER BY received_at DESC, pk DESC LIMIT $4`,
        [sourceIds.map((id) => pgText(id)), from, to, limit],
      ),
    latest: async (sourceId, messageId) =>
      (
        await db.query<MessageRow>(
          'SELECT * FROM messages WHERE source_id = $1 AND message_id = $2 ORDER BY pk DESC LIMIT 1',
          [pgText(sourceId), pgText(messageId)],
        )
      )[0],
    count: async (sourceId) => {
      const [row] =
        sourceId === undefined
          ? await db.query<{ n: number }>('SELECT count(*) AS n FROM messages')
          : await db.query<{ n: number }>('SELECT count(*) AS n FROM messages WHERE source_id = $1', [
              pgText(sourceId),
            ])
      return row?.n ?? 0
    },
  }
}
