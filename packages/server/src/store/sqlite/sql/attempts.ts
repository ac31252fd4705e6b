import type { AttemptRow, AttemptsSql } from '../../tables/attempts.ts'
import type { SqliteDatabase } from '../database.ts'

/** attempts, outside outcomes (record-outcomes.ts). */
export function sqliteAttempts(db: SqliteDatabase): AttemptsSql {
  return {
    ofDeliveries: (deliveryIds) =>
      db
        .sql('SELECT * FROM attempts WHERE delivery_id IN (SELECT value FROM json_each(?)) ORDER BY id')
        .all(JSON.stringify(deliveryIds)) as unknown as AttemptRow[],
    recentLatencies: (destinationId, limit) =>
      (
        db
          .sql('SELECT latency_ms FROM attempts WHERE destination_id = ? ORDER BY attempted_at DESC LIMIT +?')
          .all(destinationId, limit) as { latency_ms: number }[]
      ).map((row) => row.latency_ms),
  }
}
