import type {
  AlertSettingsRow,
  OperationalEventRow,
  OperationalEventsSql,
} from '../../tables/operational-events.ts'
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'

/** operational_events and alert_settings on PostgreSQL. */
export function postgresOperationalEvents(db: PostgresDatabase): OperationalEventsSql {
  return {
    insert: (row, quietSince) =>
      db.transaction(async (client) => {
        // Several processes may report the same subject at once: one lock per type and subject makes
        // the quiet-period check and the insert one step.
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${row.type} ${row.subject}`])
        const inserted = await client.query(
          `INSERT INTO operational_events (event_id, type, subject, body, created_at, alert_status, next_attempt_at)
           SELECT $1, $2, $3, $4, $5, $6, $7
           WHERE $8::bigint IS NULL OR NOT EXISTS (SELECT 1 FROM operational_events
             WHERE type = $2 AND subject = $3 AND created_at > $8::bigint)`,
          [
            row.event_id,
            row.type,
            pgText(row.subject),
            pgText(row.body),
            row.created_at,
            row.alert_status,
            row.next_attempt_at,
            quietSince,
          ],
        )
        return (inserted.rowCount ?? 0) > 0
      }),
    list: (limit) =>
      db.query<OperationalEventRow>('SELECT * FROM operational_events ORDER BY id DESC LIMIT $1', [limit]),
    lastType: async (subject, types) =>
      (
        await db.query<{ type: string }>(
          `SELECT type FROM operational_events WHERE type = ANY($2::text[]) AND subject = $1
           ORDER BY created_at DESC, id DESC LIMIT 1`,
          [pgText(subject), types],
        )
      )[0]?.type,
    claim: (limit, now, leaseUntil) =>
      db.query<OperationalEventRow>(
        `UPDATE operational_events SET lease_until = $3 WHERE id IN (
           SELECT id FROM operational_events WHERE alert_status = 'pending' AND next_attempt_at <= $1
             AND (lease_until IS NULL OR lease_until <= $1) ORDER BY next_attempt_at, id LIMIT $2
           FOR UPDATE SKIP LOCKED)
         RETURNING *`,
        [now, limit, leaseUntil],
      ),
    settle: async (eventId, status, nextAttemptAt, error) => {
      await db.run(
        `UPDATE operational_events SET alert_status = $1, next_attempt_at = $2, last_error = $3,
           attempt_count = attempt_count + 1, lease_until = NULL WHERE event_id = $4`,
        [status, nextAttemptAt, error === null ? null : pgText(error), eventId],
      )
    },
    nextDueAt: async () =>
      (
        await db.query<{ due: number | null }>(
          `SELECT MIN(next_attempt_at) AS due FROM operational_events
           WHERE alert_status = 'pending' AND lease_until IS NULL`,
        )
      )[0]?.due ?? null,
    getSettings: async () =>
      (
        await db.query<AlertSettingsRow>(
          'SELECT url, shared_secret, events, updated_at FROM alert_settings WHERE id = 1',
        )
      )[0],
    putSettings: async (row) => {
      if (row === null) {
        await db.run('DELETE FROM alert_settings')
        return
      }
      await db.run(
        `INSERT INTO alert_settings (id, url, shared_secret, events, updated_at) VALUES (1, $1, $2, $3, $4)
         ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, shared_secret = EXCLUDED.shared_secret,
           events = EXCLUDED.events, updated_at = EXCLUDED.updated_at`,
        [pgText(row.url), row.shared_secret, row.events, row.updated_at],
      )
    },
    replaceSealedSettings: async (from, to) =>
      (
        await db.query(
          `UPDATE alert_settings SET url = $1, shared_secret = $2
           WHERE id = 1 AND url = $3 AND shared_secret = $4 RETURNING id`,
          [pgText(to.url), to.shared_secret, pgText(from.url), from.shared_secret],
        )
      ).length > 0,
  }
}
