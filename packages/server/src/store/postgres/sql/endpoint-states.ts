import type { AttemptSummaryRow, EndpointStateRow, EndpointStatesSql } from '../../tables/endpoint-states.ts'
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'

/** endpoint_states on PostgreSQL, and the bounded read of recent attempts health figures come from. */
export function postgresEndpointStates(db: PostgresDatabase): EndpointStatesSql {
  return {
    list: () => db.query<EndpointStateRow>('SELECT * FROM endpoint_states'),
    markFailing: async (destinationId, url, since) =>
      (await db.run(
        `INSERT INTO endpoint_states (destination_id, url, failing_since, updated_at) VALUES ($1, $2, $3, $3)
         ON CONFLICT (destination_id, url) DO UPDATE SET failing_since = EXCLUDED.failing_since, updated_at = EXCLUDED.updated_at
         WHERE endpoint_states.failing_since IS NULL`,
        [destinationId, pgText(url), since],
      )) > 0,
    markRecovered: async (destinationId, url, now) =>
      (await db.run(
        `UPDATE endpoint_states SET failing_since = NULL, updated_at = $1
         WHERE destination_id = $2 AND url = $3 AND failing_since IS NOT NULL`,
        [now, destinationId, pgText(url)],
      )) > 0,
    disable: async (destinationId, url, reason, now) =>
      (await db.run(
        `INSERT INTO endpoint_states (destination_id, url, disabled_at, disabled_reason, updated_at) VALUES ($1, $2, $3, $4, $3)
         ON CONFLICT (destination_id, url) DO UPDATE SET disabled_at = EXCLUDED.disabled_at,
           disabled_reason = EXCLUDED.disabled_reason, updated_at = EXCLUDED.updated_at
         WHERE endpoint_states.disabled_at IS NULL`,
        [destinationId, pgText(url), now, pgText(reason)],
      )) > 0,
    enable: async (destinationId, url, now) =>
      (await db.run(
        `UPDATE endpoint_states SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL, updated_at = $1
         WHERE destination_id = $2 AND url = $3 AND disabled_at IS NOT NULL`,
        [now, destinationId, pgText(url)],
      )) > 0,
    recentAttempts: (destinationId, limit) =>
      db.query<AttemptSummaryRow>(
        `(SELECT url, attempted_at, status_code, error_text FROM attempts
            WHERE destination_id = $1 ORDER BY attempted_at DESC LIMIT $2)
         UNION ALL
         (SELECT url, attempted_at, status_code, error_text FROM batch_attempts
            WHERE destination_id = $1 ORDER BY id DESC LIMIT $2)`,
        [destinationId, limit],
      ),
  }
}
