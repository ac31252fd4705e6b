import type { AttemptSummaryRow, EndpointStateRow, EndpointStatesSql } from '../../tables/endpoint-states.ts'
import type { SqliteDatabase } from '../database.ts'

/** endpoint_states, and the bounded read of recent attempts health figures come from. */
export function sqliteEndpointStates(db: SqliteDatabase): EndpointStatesSql {
  return {
    list: () => db.sql('SELECT * FROM endpoint_states').all() as unknown as EndpointStateRow[],
    markFailing: (destinationId, url, since) =>
      db
        .sql(
          `INSERT INTO endpoint_states (destination_id, url, failing_since, updated_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (destination_id, url) DO UPDATE SET failing_since = excluded.failing_since, updated_at = excluded.updated_at
           WHERE endpoint_states.failing_since IS NULL`,
        )
        .run(destinationId, url, since, since).changes > 0,
    markRecovered: (destinationId, url, now) =>
      db
        .sql(
          `UPDATE endpoint_states SET failing_since = NULL, updated_at = ?
           WHERE destination_id = ? AND url = ? AND failing_since IS NOT NULL`,
        )
        .run(now, destinationId, url).changes > 0,
    disable: (destinationId, url, reason, now) =>
      db
        .sql(
          `INSERT INTO endpoint_states (destination_id, url, disabled_at, disabled_reason, updated_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (destination_id, url) DO UPDATE SET disabled_at = excluded.disabled_at,
             disabled_reason = excluded.disabled_reason, updated_at = excluded.updated_at
           WHERE endpoint_states.disabled_at IS NULL`,
        )
        .run(destinationId, url, now, reason, now).changes > 0,
    enable: (destinationId, url, now) =>
      db
        .sql(
          `UPDATE endpoint_states SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL, updated_at = ?
           WHERE destination_id = ? AND url = ? AND disabled_at IS NOT NULL`,
        )
        .run(now, destinationId, url).changes > 0,
    recentAttempts: (destinationId, limit) =>
      db
        .sql(
          `SELECT * FROM (SELECT url, attempted_at, status_code, error_text FROM attempts
             WHERE destination_id = ? ORDER BY attempted_at DESC LIMIT +?)
           UNION ALL
           SELECT * FROM (SELECT url, attempted_at, status_code, error_text FROM batch_attempts
             WHERE destination_id = ? ORDER BY id DESC LIMIT +?)`,
        )
        .all(destinationId, limit, destinationId, limit) as unknown as AttemptSummaryRow[],
  }
}
