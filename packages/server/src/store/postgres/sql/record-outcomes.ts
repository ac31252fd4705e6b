/** Outcomes on PostgreSQL, the hot write path of the delivery engine: attempts and new states in ONE statement. */
import type { DeliveryAttempt } from '../../../domain/deliveries.ts'
import type { ClaimRow, RecordOutcomesSql } from '../../tables/deliveries.ts'
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'
import { postgresClaimDeliveries } from './claim-deliveries.ts'

/**
 * Outcomes in one statement: the deliveries' new states (leases released) and their attempts. A
 * delivery that no longer exists (its destination was deleted meanwhile) gets no attempt rows. The rows
 * are locked in id order first, as every transaction that locks several deliveries does, so two of them
 * wait for each other instead of deadlocking.
 */
const RECORD_SQL = `
WITH o AS (
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::boolean[], $4::bigint[], $5::bigint[], $6::text[])
    AS o(id, status, dead_lettered, next_attempt_at, first_attempt_at, closed_urls)
),
locked AS (
  SELECT id FROM deliveries WHERE id = ANY ($1::bigint[]) ORDER BY id FOR UPDATE
),
updated AS (
  UPDATE deliveries d SET status = o.status, dead_lettered = o.dead_lettered,
    attempt_count = d.attempt_count + 1, next_attempt_at = o.next_attempt_at,
    first_attempt_at = COALESCE(d.first_attempt_at, o.first_attempt_at), closed_urls = o.closed_urls,
    lease_until = NULL, updated_at = $7
  -- The subquery runs once, before the first row is updated: every row is locked, in order, first.
  FROM o WHERE d.id = o.id AND (SELECT count(*) FROM locked) >= 0
  RETURNING d.id, d.destination_id
)
INSERT INTO attempts (delivery_id, destination_id, attempted_at, url, status_code, error_kind, error_text,
  latency_ms, response_excerpt)
SELECT a.delivery_id, u.destination_id, a.attempted_at, a.url, a.status_code, a.error_kind, a.error_text,
  a.latency_ms, a.response_excerpt
FROM unnest($8::bigint[], $9::bigint[], $10::text[], $11::int[], $12::text[], $13::text[], $14::int[], $15::text[])
  WITH ORDINALITY AS a(delivery_id, attempted_at, url, status_code, error_kind, error_text, latency_ms,
    response_excerpt, ord)
JOIN updated u ON u.id = a.delivery_id
ORDER BY a.ord`

/** Attempts as the parameter arrays the attempt inserts unnest: owner id, then one array per column. */
export function attemptColumns(attempts: { ownerId: number; attempt: DeliveryAttempt }[]): unknown[] {
  return [
    attempts.map((a) => a.ownerId),
    attempts.map((a) => a.attempt.attemptedAt),
    attempts.map((a) => pgText(a.attempt.url)),
    attempts.map((a) => a.attempt.statusCode),
    attempts.map((a) => pgText(a.attempt.errorKind)),
    // Receivers' answers are arbitrary bytes: a U+0000 in one must not fail the whole group.
    attempts.map((a) => pgText(a.attempt.errorText)),
    // An INTEGER column: fractional milliseconds are rounded.
    attempts.map((a) => Math.round(a.attempt.latencyMs)),
    attempts.map((a) => pgText(a.attempt.responseExcerpt)),
  ]
}

export function postgresRecordOutcomes(db: PostgresDatabase): RecordOutcomesSql {
  const claim = postgresClaimDeliveries(db)
  return async ({ deliveries, attempts }, now, claims) => {
    const params = [
      deliveries.map((d) => d.id),
      deliveries.map((d) => d.status),
      deliveries.map((d) => d.deadLettered),
      deliveries.map((d) => d.nextAttemptAt),
      deliveries.map((d) => d.firstAttemptAt),
      deliveries.map((d) => pgText(d.closedUrls)),
      now,
      ...attemptColumns(attempts.map((a) => ({ ownerId: a.deliveryId, attempt: a.attempt }))),
    ]
    await db.retrying(() => db.query(RECORD_SQL, params))
    // Claims are their own statements (their commit does not wait for the WAL flush; see claim-deliveries.ts).
    // The outcomes are committed now: a claim that fails MUST NOT fail this call, or the engine would
    // record them a second time (a retry's second record could undo another worker's success). A
    // failed claim leased nothing (one statement); its deliveries are claimed on a later pass.
    const claimed: ClaimRow[][] = []
    for (const { destinationId, limit, now: at, leaseUntil } of claims) {
      try {
        claimed.push(await claim(destinationId, limit, at, leaseUntil))
      } catch (error) {
        db.logger.warn({ err: error, destinationId }, 'postgres: a claim after recording outcomes failed')
        claimed.push([])
      }
    }
    return claimed
  }
}
