/**
 * Outcomes on SQLite, the hot write path of the delivery engine: attempts and new states, leases
 * released, and the engine's next claims in the same transaction.
 */
import type { RecordOutcomesSql } from '../../tables/deliveries.ts'
import { flag, type SqliteDatabase } from '../database.ts'
import { claimedDestinations, claimIn } from './claim-deliveries.ts'

export function sqliteRecordOutcomes(db: SqliteDatabase): RecordOutcomesSql {
  const claim = claimIn(db)
  const claimed = claimedDestinations(db)
  return ({ deliveries, attempts }, now, claims) => {
    // Each delivery's new state first. Its attempts carry its destination (latency figures per
    // destination): the one it was claimed for on this connection (claim-deliveries.ts), else read
    // from the row. A delivery that no longer exists (its destination was deleted meanwhile) changes
    // no row and gets no attempt rows. No RETURNING: it made the UPDATE ~13% dearer.
    const update = db.sql(
      `UPDATE deliveries SET status = ?, dead_lettered = ?, attempt_count = attempt_count + 1,
         next_attempt_at = ?, first_attempt_at = COALESCE(first_attempt_at, ?), closed_urls = ?,
         lease_until = NULL, updated_at = ?
       WHERE id = ?`,
    )
    const destinationOf = db.sql('SELECT destination_id FROM deliveries WHERE id = ?')
    const insertAttempt = db.sql(
      `INSERT INTO attempts (delivery_id, destination_id, attempted_at, url, status_code, error_kind, error_text, latency_ms, response_excerpt)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    return db.transaction(() => {
      const destinations = new Map<number, string>()
      for (const row of deliveries) {
        const { changes } = update.run(
          row.status,
          flag(row.deadLettered),
          row.nextAttemptAt,
          row.firstAttemptAt,
          row.closedUrls,
          now,
          row.id,
        )
        const known = claimed.get(row.id)
        claimed.delete(row.id)
        if (changes === 0) continue
        const destinationId =
          known ?? (destinationOf.get(row.id) as { destination_id: string } | undefined)?.destination_id
        if (destinationId !== undefined) destinations.set(row.id, destinationId)
      }
      for (const { deliveryId, attempt } of attempts) {
        const destinationId = destinations.get(deliveryId)
        if (destinationId === undefined) continue
        insertAttempt.run(
          deliveryId,
          destinationId,
          attempt.attemptedAt,
          attempt.url,
          attempt.statusCode,
          attempt.errorKind,
          attempt.errorText,
          attempt.latencyMs,
          attempt.responseExcerpt,
        )
      }
      // The next claims share the commit: one transaction and one fsync for the engine's round trip.
      return claims.map(claim)
    })
  }
}
