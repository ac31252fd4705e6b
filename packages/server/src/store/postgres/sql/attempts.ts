import type { AttemptRow, AttemptsSql } from '../../tables/attempts.ts'
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'

/** attempts on PostgreSQL, outside outcomes (record-outcomes.ts). */
export function postgresAttempts(db: PostgresDatabase): AttemptsSql {
  return {
    ofDeliveries: (deliveryIds) =>
      db.query<AttemptRow>('SELECT * FROM attempts WHERE delivery_id = ANY($1::bigint[]) ORDER BY id', [
        deliveryIds,
      ]),
    recentLatencies: async (destinationId, limit) =>
      (
        await db.query<{ latency_ms: number }>(
          'SELECT latency_ms FROM attempts WHERE destination_id = $1 ORDER BY attempted_at DESC LIMIT $2',
          [pgText(destinationId), limit],
        )
      ).map((row) => row.latency_ms),
  }
}
