import type { SweepSql } from '../../core/sweep.ts'
import type { PostgresDatabase } from '../database.ts'

/** Per schema, like the channel and the migration lock. */
const LOCK_KEY = "hashtext('sluice.sweep'), hashtext(COALESCE(current_schema(), ''))"

/**
 * Retention and dedupe-key expiry on PostgreSQL. Every API process sweeps; a session advisory lock lets
 * one at a time do the work (the others return at once) so they never fight over the same rows.
 */
export function postgresSweep(db: PostgresDatabase): SweepSql {
  return {
    exclusive: (work) =>
      db.withClient(async (client) => {
        const { rows } = await client.query<{ locked: boolean }>(
          `SELECT pg_try_advisory_lock(${LOCK_KEY}) AS locked`,
        )
        if (!rows[0]?.locked) return null
        try {
          return await work({
            messagesAfter: async (afterPk, limit) =>
              (
                await client.query<{ pk: number; received_at: number }>(
                  'SELECT pk, received_at FROM messages WHERE pk > $1 ORDER BY pk LIMIT $2',
                  [afterPk, limit],
                )
              ).rows,
            // With their deliveries and attempts (no FKs, see 001_init.sql). A message with a pending or
            // retrying delivery stays.
            deleteIfFinal: async (pks) => {
              const { rows } = await client.query<{ n: number }>(
                // Their deliveries locked first (the subquery runs before the first delete), in id order, as
                // erasure and outcome commits lock them.
                `WITH locked AS MATERIALIZED (
                   SELECT id FROM deliveries WHERE message_pk = ANY($1::bigint[]) ORDER BY id FOR UPDATE),
                 gone AS (
                   DELETE FROM messages m WHERE m.pk = ANY($1::bigint[])
                   AND m.pk <= (SELECT high_pk FROM profile_cursor)
                   AND (SELECT count(*) FROM locked) >= 0
                   AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.message_pk = m.pk AND d.status IN ('pending', 'retrying'))
                   RETURNING pk),
                 deliveries_gone AS (DELETE FROM deliveries WHERE message_pk IN (SELECT pk FROM gone) RETURNING id),
                 attempts_gone AS (DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries_gone))
                 SELECT count(*) AS n FROM gone`,
                [pks],
              )
              return rows[0]?.n ?? 0
            },
            dropEmptyBatches: async () => {
              await client.query(
                `WITH gone AS (
                   DELETE FROM delivery_batches b WHERE b.status IN ('delivered', 'failed')
                   AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.batch_id = b.id)
                   RETURNING id)
                 DELETE FROM batch_attempts WHERE batch_id IN (SELECT id FROM gone)`,
              )
            },
            expireDedupeKeys: async (before, limit) =>
              (
                await client.query(
                  `DELETE FROM dedupe_keys WHERE ctid = ANY (ARRAY(
                     SELECT ctid FROM dedupe_keys WHERE received_at < $1 LIMIT $2))`,
                  [before, limit],
                )
              ).rowCount ?? 0,
            // One statement: the shard rows' sum lands on shard 0 in the transaction that deletes them,
            // so a reader sees either the shards or their sum, never both or neither.
            foldRollupShards: async (before) =>
              (
                await client.query(
                  `WITH moved AS (
                     DELETE FROM source_rollups WHERE minute < $1 AND shard <> 0
                     RETURNING source_id, minute, accepted)
                   INSERT INTO source_rollups (source_id, minute, shard, accepted)
                   SELECT source_id, minute, 0, sum(accepted) FROM moved GROUP BY source_id, minute
                   ON CONFLICT (source_id, minute, shard)
                   DO UPDATE SET accepted = source_rollups.accepted + EXCLUDED.accepted`,
                  [before],
                )
              ).rowCount ?? 0,
          })
        } finally {
          await client.query(`SELECT pg_advisory_unlock(${LOCK_KEY})`)
        }
      }),
  }
}
