/** delivery_batches, batch_attempts and deliveries.batch_id on PostgreSQL. */
import type { FormedBatch } from '../../../domain/delivery-store.ts'
import type {
  BatchAttemptRow,
  BatchClaimRow,
  BatchMemberRow,
  CandidateRow,
  DeliveryBatchesSql,
} from '../../tables/delivery-batches.ts'
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'
import { DELETE_ORPHANS_AMONG } from './claim-deliveries.ts'
import { attemptColumns } from './record-outcomes.ts'

const UNBATCHED_DUE = `d.destination_id = $1 AND d.status IN ('pending', 'retrying') AND d.batch_id IS NULL
  AND d.next_attempt_at <= $2 AND (d.lease_until IS NULL OR d.lease_until <= $2)`

/**
 * Rows another worker is claiming or batching right now are skipped (SKIP LOCKED), never waited for;
 * once it commits they carry a lease or a batch_id and no longer match. So a delivery joins one batch
 * at most, and formers never deadlock.
 */
const JOIN_SQL = `
WITH chosen AS (
  SELECT d.id FROM deliveries d WHERE d.id = ANY($3::bigint[]) AND ${UNBATCHED_DUE}
  ORDER BY d.id FOR UPDATE SKIP LOCKED
)
UPDATE deliveries d SET batch_id = $4, status = 'pending', next_attempt_at = $2, updated_at = $2
FROM chosen WHERE d.id = chosen.id
RETURNING d.id`

const CLAIM_SQL = `
WITH due AS (
  SELECT id FROM delivery_batches
  WHERE destination_id = $1 AND status IN ('pending', 'retrying') AND next_attempt_at <= $2
    AND (lease_until IS NULL OR lease_until <= $2)
  ORDER BY next_attempt_at, id
  LIMIT $3
  FOR UPDATE SKIP LOCKED
)
UPDATE delivery_batches b SET lease_until = $4, updated_at = $2
FROM due WHERE b.id = due.id
RETURNING b.id, b.attempt_count, b.first_attempt_at, b.closed_urls`

const RECORD_SQL = `
WITH o AS (
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::boolean[], $4::bigint[], $5::bigint[], $6::text[])
    AS o(id, status, dead_lettered, next_attempt_at, first_attempt_at, closed_urls)
),
batches AS (
  UPDATE delivery_batches b SET status = o.status, dead_lettered = o.dead_lettered,
    attempt_count = b.attempt_count + 1, next_attempt_at = o.next_attempt_at,
    first_attempt_at = COALESCE(b.first_attempt_at, o.first_attempt_at), closed_urls = o.closed_urls,
    lease_until = NULL, updated_at = $7
  FROM o WHERE b.id = o.id
  RETURNING b.id, b.destination_id
),
members AS (
  UPDATE deliveries d SET status = o.status, dead_lettered = o.dead_lettered,
    attempt_count = d.attempt_count + 1, next_attempt_at = o.next_attempt_at,
    first_attempt_at = COALESCE(d.first_attempt_at, o.first_attempt_at), closed_urls = o.closed_urls,
    lease_until = NULL, updated_at = $7
  FROM o WHERE d.batch_id = o.id AND d.batch_id IN (SELECT id FROM batches)
)
INSERT INTO batch_attempts (batch_id, destination_id, attempted_at, url, status_code, error_kind, error_text,
  latency_ms, response_excerpt)
SELECT a.batch_id, b.destination_id, a.attempted_at, a.url, a.status_code, a.error_kind, a.error_text,
  a.latency_ms, a.response_excerpt
FROM unnest($8::bigint[], $9::bigint[], $10::text[], $11::int[], $12::text[], $13::text[], $14::int[], $15::text[])
  WITH ORDINALITY AS a(batch_id, attempted_at, url, status_code, error_kind, error_text, latency_ms,
    response_excerpt, ord)
JOIN batches b ON b.id = a.batch_id
ORDER BY a.ord`

export function postgresDeliveryBatches(db: PostgresDatabase): DeliveryBatchesSql {
  return {
    candidates: (destinationId, limit, now) =>
      db.query<CandidateRow>(
        `WITH head AS (SELECT d.id FROM deliveries d WHERE ${UNBATCHED_DUE} ORDER BY d.next_attempt_at, d.id LIMIT $3),
         ${DELETE_ORPHANS_AMONG('head')}
         SELECT d.id, d.next_attempt_at, d.replay_id, d.attempt_count, d.first_attempt_at, d.closed_urls,
           m.payload, m.source_id, m.received_at
         FROM deliveries d JOIN messages m ON m.pk = d.message_pk
         WHERE d.id IN (SELECT id FROM head) ORDER BY d.next_attempt_at, d.id`,
        [pgText(destinationId), now, limit],
      ),
    form: (destinationId, groups, now, leaseUntil) =>
      db.retrying(() =>
        db.transaction(async (client) => {
          const kept: FormedBatch[] = []
          for (const group of groups) {
            const inserted = await client.query<{ id: number }>(
              `INSERT INTO delivery_batches (destination_id, status, next_attempt_at, lease_until, created_at, updated_at)
               VALUES ($1, 'pending', $2, $3, $2, $2) RETURNING id`,
              [pgText(destinationId), now, leaseUntil],
            )
            const id = Number(inserted.rows[0]!.id)
            const joined = await client.query<{ id: number }>(JOIN_SQL, [
              pgText(destinationId),
              now,
              group,
              id,
            ])
            if (joined.rows.length === 0)
              await client.query('DELETE FROM delivery_batches WHERE id = $1', [id])
            else kept.push({ id, memberIds: joined.rows.map((row) => Number(row.id)).sort((a, b) => a - b) })
          }
          return kept
        }),
      ),
    claim: (destinationId, limit, now, leaseUntil) =>
      db.transaction(async (client) => {
        const batches = (
          await client.query<BatchClaimRow>(CLAIM_SQL, [pgText(destinationId), now, limit, leaseUntil])
        ).rows
        if (batches.length === 0) return { batches, members: [] }
        const batchIds = batches.map((batch) => batch.id)
        const members = (
          await client.query<BatchMemberRow>(
            `SELECT d.id, d.batch_id, d.attempt_count, d.first_attempt_at, d.closed_urls, d.replay_id, m.payload, m.source_id, m.received_at
             FROM deliveries d JOIN messages m ON m.pk = d.message_pk
             WHERE d.batch_id = ANY($1::bigint[]) ORDER BY d.id`,
            [batchIds],
          )
        ).rows
        // Every member erased by a deletion request: nothing is left to send.
        await client.query(
          `DELETE FROM delivery_batches b WHERE b.id = ANY($1::bigint[])
             AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.batch_id = b.id)`,
          [batchIds],
        )
        return { batches, members }
      }),
    record: async (rows, attempts, now) => {
      await db.retrying(() =>
        db.query(RECORD_SQL, [
          rows.map((r) => r.id),
          rows.map((r) => r.status),
          rows.map((r) => r.deadLettered),
          rows.map((r) => r.nextAttemptAt),
          rows.map((r) => r.firstAttemptAt),
          rows.map((r) => pgText(r.closedUrls)),
          now,
          ...attemptColumns(attempts.map((a) => ({ ownerId: a.batchId, attempt: a.attempt }))),
        ]),
      )
    },
    release: async (batchIds) => {
      await db.run('UPDATE delivery_batches SET lease_until = NULL WHERE id = ANY($1::bigint[])', [batchIds])
    },
    nextDueAt: async (destinationId, now) => {
      const [row] = await db.query<{ at: number }>(
        `SELECT next_attempt_at AS at FROM delivery_batches
         WHERE destination_id = $1 AND status IN ('pending', 'retrying') AND (lease_until IS NULL OR lease_until <= $2)
         ORDER BY next_attempt_at LIMIT 1`,
        [pgText(destinationId), now],
      )
      return row === undefined ? null : Number(row.at)
    },
    openDestinations: async () =>
      (
        await db.query<{ destination_id: string }>(
          "SELECT DISTINCT destination_id FROM delivery_batches WHERE status IN ('pending', 'retrying')",
        )
      ).map((row) => row.destination_id),
    payloadsOf: (batchId) =>
      db.query<{ payload: string }>(
        'SELECT m.payload FROM deliveries d JOIN messages m ON m.pk = d.message_pk WHERE d.batch_id = $1 ORDER BY d.id',
        [batchId],
      ),
    recentLatencies: async (destinationId, limit) =>
      (
        await db.query<{ latency_ms: number }>(
          'SELECT latency_ms FROM batch_attempts WHERE destination_id = $1 ORDER BY id DESC LIMIT $2',
          [pgText(destinationId), limit],
        )
      ).map((row) => row.latency_ms),
    attemptsOf: (batchIds) =>
      db.query<BatchAttemptRow>(
        'SELECT * FROM batch_attempts WHERE batch_id = ANY($1::bigint[]) ORDER BY id',
        [batchIds],
      ),
  }
}
