/** Claims on PostgreSQL, the hot read path of the delivery engine: pick and lease due deliveries. */
import type { ClaimDeliveriesSql, ClaimRow } from '../../tables/deliveries.ts'
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'

/**
 * Deletes the deliveries among `candidates` (a CTE of delivery ids) whose message is gone. There are
 * none but after a race this store cannot rule out without locking every message a replay reads: a
 * replay step enqueueing a call while a deletion request or retention deletes it (no foreign keys on
 * PostgreSQL, see 001_init.sql). Such a delivery can never be sent; left in place, it would stay due
 * at the head of its destination's queue, taking a claim's places and waking the worker again and
 * again. A delivery is never committed before its message, so one whose message this statement does
 * not see has lost it for good. SKIP LOCKED: two processes cleaning up at once never wait for (or
 * deadlock on) each other's rows.
 */
export const DELETE_ORPHANS_AMONG = (candidates: string): string => `orphans AS (
  DELETE FROM deliveries o WHERE o.id IN (
    SELECT c.id FROM deliveries c WHERE c.id IN (SELECT id FROM ${candidates})
      AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.pk = c.message_pk)
    FOR UPDATE SKIP LOCKED)
)`

/**
 * Picks and leases in one statement. SKIP LOCKED: rows another worker is claiming right now are
 * passed over instead of waited for; once that worker commits, its rows carry a live lease and no
 * longer match. So two claimers never get the same delivery, and neither blocks the other.
 *
 * The claim commits without waiting for its WAL flush (synchronous_commit off for this transaction
 * only, via set_config(..., true)). Harmless: if PostgreSQL crashes before the flush, the lease is lost
 * and the delivery is claimable again — the same outcome as the worker crashing, which leases already
 * handle. Ingest and outcome commits keep the server's setting (durable).
 */
const CLAIM_SQL = `
WITH due AS (
  SELECT id FROM deliveries
  WHERE destination_id = $1 AND status IN ('pending', 'retrying') AND next_attempt_at <= $2 AND batch_id IS NULL
    AND (lease_until IS NULL OR lease_until <= $2)
  ORDER BY next_attempt_at, id
  LIMIT $3
  FOR UPDATE SKIP LOCKED
),
${DELETE_ORPHANS_AMONG('due')}
UPDATE deliveries d SET lease_until = $4, updated_at = $2
FROM due, messages m, (SELECT set_config('synchronous_commit', 'off', true)) AS no_flush_wait
WHERE d.id = due.id AND m.pk = d.message_pk
RETURNING d.id, d.attempt_count, d.first_attempt_at, d.closed_urls, d.replay_id, m.payload, m.source_id, m.received_at`

export function postgresClaimDeliveries(db: PostgresDatabase): ClaimDeliveriesSql {
  return (destinationId, limit, now, leaseUntil) =>
    db.query<ClaimRow>(CLAIM_SQL, [pgText(destinationId), now, limit, leaseUntil])
}
