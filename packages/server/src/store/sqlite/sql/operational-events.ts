import type {
  AlertSettingsRow,
  OperationalEventRow,
  OperationalEventsSql,
} from '../../tables/operational-events.ts'
import type { SqliteDatabase } from '../database.ts'

/** operational_events and alert_settings. One writer at a time, so the quiet-period check is atomic. */
export function sqliteOperationalEvents(db: SqliteDatabase): OperationalEventsSql {
  return {
    insert: (row, quietSince) =>
      db
        .sql(
          `INSERT INTO operational_events (event_id, type, subject, body, created_at, alert_status, next_attempt_at)
           SELECT ?, ?, ?, ?, ?, ?, ?
           WHERE ? IS NULL OR NOT EXISTS (SELECT 1 FROM operational_events
             WHERE type = ? AND subject = ? AND created_at > ?)`,
        )
        .run(
          row.event_id,
          row.type,
          row.subject,
          row.body,
          row.created_at,
          row.alert_status,
          row.next_attempt_at,
          quietSince,
          row.type,
          row.subject,
          quietSince,
        ).changes > 0,
    list: (limit) =>
      db
        .sql('SELECT * FROM operational_events ORDER BY id DESC LIMIT +?')
        .all(limit) as unknown as OperationalEventRow[],
    lastType: (subject, types) =>
      (
        db
          .sql(
            `SELECT type FROM operational_events WHERE type IN (SELECT value FROM json_each(?)) AND subject = ?
             ORDER BY created_at DESC, id DESC LIMIT 1`,
          )
          .get(JSON.stringify(types), subject) as { type: string } | undefined
      )?.type,
    claim: (limit, now, leaseUntil) =>
      db.transaction(() => {
        const rows = db
          .sql(
            `SELECT * FROM operational_events WHERE alert_status = 'pending' AND next_attempt_at <= ?
               AND (lease_until IS NULL OR lease_until <= ?) ORDER BY next_attempt_at, id LIMIT +?`,
          )
          .all(now, now, limit) as unknown as OperationalEventRow[]
        const lease = db.sql('UPDATE operational_events SET lease_until = ? WHERE id = ?')
        for (const row of rows) lease.run(leaseUntil, row.id)
        return rows
      }),
    settle: (eventId, status, nextAttemptAt, error) => {
      db.sql(
        `UPDATE operational_events SET alert_status = ?, next_attempt_at = ?, last_error = ?,
           attempt_count = attempt_count + 1, lease_until = NULL WHERE event_id = ?`,
      ).run(status, nextAttemptAt, error, eventId)
    },
    nextDueAt: () =>
      (
        db
          .sql(
            `SELECT MIN(next_attempt_at) AS due FROM operational_events
             WHERE alert_status = 'pending' AND lease_until IS NULL`,
          )
          .get() as { due: number | null }
      ).due,
    getSettings: () =>
      db.sql('SELECT url, shared_secret, events, updated_at FROM alert_settings WHERE id = 1').get() as
        | AlertSettingsRow
        | undefined,
    putSettings: (row) => {
      if (row === null) {
        db.sql('DELETE FROM alert_settings').run()
        return
      }
      db.sql(
        `INSERT INTO alert_settings (id, url, shared_secret, events, updated_at) VALUES (1, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET url = excluded.url, shared_secret = excluded.shared_secret,
           events = excluded.events, updated_at = excluded.updated_at`,
      ).run(row.url, row.shared_secret, row.events, row.updated_at)
    },
    replaceSealedSettings: (from, to) =>
      db
        .sql(
          'UPDATE alert_settings SET url = ?, shared_secret = ? WHERE id = 1 AND url = ? AND shared_secret = ?',
        )
        .run(to.url, to.shared_secret, from.url, from.shared_secret).changes > 0,
  }
}
