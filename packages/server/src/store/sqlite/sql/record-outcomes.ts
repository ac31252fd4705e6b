/** Outcomes on SQLite, the hot write path of the delivery engine: attempts and new states, leases released. */
import type { StoreSql } from '../../core/store-sql.ts'
import { flag, type SqliteDatabase } from '../database.ts'

export function sqliteRecordOutcomes(db: SqliteDatabase): StoreSql['recordOutcomes'] {
  return ({ deliveries, attempts }, now) => {
    // The delivery's destination is copied onto each attempt (latency figures per destination); a
    // delivery that no longer exists gets no attempt rows.
    const insertAttempt = db.sql(
      `INSERT INTO attempts (delivery_id, destination_id, attempted_at, url, status_code, error_kind, error_text, latency_ms, response_excerpt)
       SELECT id, destination_id, ?, ?, ?, ?, ?, ?, ? FROM deliveries WHERE id = ?`,
    )
    const update = db.sql(
      `UPDATE deliveries SET status = ?, dead_lettered = ?, attempt_count = attempt_count + 1,
         next_attempt_at = ?, first_attempt_at = COALESCE(first_attempt_at, ?), closed_urls = ?,
         lease_until = NULL, updated_at = ?
       WHERE id = ?`,
    )
    db.transaction(() => {
      for (const { deliveryId, attempt } of attempts) {
        insertAttempt.run(
          attempt.attemptedAt,
          attempt.url,
          attempt.statusCode,
          attempt.errorKind,
          attempt.errorText,
          attempt.latencyMs,
          attempt.responseExcerpt,
          deliveryId,
        )
      }
      for (const row of deliveries) {
        update.run(
          row.status,
          flag(row.deadLettered),
          row.nextAttemptAt,
          row.firstAttemptAt,
          row.closedUrls,
          now,
          row.id,
        )
      }
    })
  }
}
