/**
 * sources and source_counters on PostgreSQL. Counters are sharded (see 001_init.sql): each write picks a
 * shard at random, so API processes stay off each other's row locks; readers sum the shards.
 */
import { randomInt } from 'node:crypto'
import type { SourceStats } from '../../../domain/sources.ts'
import type { SourceRow, SourcesSql } from '../../tables/sources.ts'
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'

/** Counter shards per source (see source_counters in 001_init.sql). */
export const COUNTER_SHARDS = 16

export function postgresSources(db: PostgresDatabase): SourcesSql {
  /** INSERT … SELECT FROM sources: a deleted source is silently skipped, as SQLite's UPDATE does. */
  const addToCounter = async (column: 'rejected' | 'suppressed', id: string, count: number) => {
    await db.query(
      `INSERT INTO source_counters AS c (source_id, shard, ${column})
       SELECT id, $3, $2 FROM sources WHERE id = $1
       ON CONFLICT (source_id, shard) DO UPDATE SET ${column} = c.${column} + EXCLUDED.${column}`,
      [pgText(id), count, randomInt(COUNTER_SHARDS)],
    )
  }
  const first = async (text: string, values: unknown[]) => (await db.query<SourceRow>(text, values))[0]
  return {
    insert: async (source) =>
      (await first(
        'INSERT INTO sources (id, name, write_key, write_key_hash, enabled, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *',
        [
          source.id,
          pgText(source.name),
          source.write_key,
          source.write_key_hash,
          source.enabled,
          source.created_at,
        ],
      ))!,
    list: () => db.query<SourceRow>('SELECT * FROM sources ORDER BY created_at, id'),
    get: (id) => first('SELECT * FROM sources WHERE id = $1', [pgText(id)]),
    getByWriteKeyHash: (hash) => first('SELECT * FROM sources WHERE write_key_hash = $1', [hash]),
    replaceWriteKey: async (id, from, to, hash) =>
      (
        await db.query(
          'UPDATE sources SET write_key = $3, write_key_hash = $4 WHERE id = $1 AND write_key = $2 RETURNING id',
          [id, from, to, hash],
        )
      ).length > 0,
    update: (id, change) =>
      first(
        `UPDATE sources SET name = COALESCE($2, name), enabled = COALESCE($3, enabled),
           write_key = COALESCE($4, write_key), write_key_hash = COALESCE($5, write_key_hash)
         WHERE id = $1 RETURNING *`,
        [
          pgText(id),
          pgText(change.name),
          change.enabled,
          change.writeKey?.stored ?? null,
          change.writeKey?.hash ?? null,
        ],
      ),
    // Messages, keys, deliveries and attempts have no FKs (see 001_init.sql): removed here, in order.
    // Step 2 locks rows that outcome commits of other processes lock too, in another order; PostgreSQL
    // then aborts one of the two (deadlock), and the whole transaction runs again: it is idempotent.
    delete: (id) =>
      db.transaction(async (client) => {
        // A source's history can be millions of rows: this rare admin operation may outlast the timeout.
        await client.query('SET LOCAL statement_timeout = 0')
        // 1. The source row first: waits for in-flight ingests (they hold it FOR KEY SHARE); ingests
        //    that come later find it gone and store nothing for it.
        const deleted = await client.query('DELETE FROM sources WHERE id = $1', [pgText(id)])
        if ((deleted.rowCount ?? 0) === 0) return false
        // 2. Lock its deliveries: waits for outcomes being recorded right now, so that their attempt rows
        //    are visible to step 3 (a later statement); later outcomes find the rows gone.
        await client.query(
          `WITH locked AS (SELECT d.id FROM deliveries d JOIN messages m ON m.pk = d.message_pk
             WHERE m.source_id = $1 FOR UPDATE OF d) SELECT count(*) FROM locked`,
          [pgText(id)],
        )
        // 3. Messages with their deliveries and attempts; then its dedupe keys. Connections and
        //    counters go by FK cascade.
        await client.query(
          `WITH gone AS (DELETE FROM messages WHERE source_id = $1 RETURNING pk),
             deliveries_gone AS (DELETE FROM deliveries WHERE message_pk IN (SELECT pk FROM gone) RETURNING id)
           DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries_gone)`,
          [pgText(id)],
        )
        await client.query('DELETE FROM dedupe_keys WHERE source_id = $1', [pgText(id)])
        return true
      }),
    stats: async (id) =>
      (
        await db.query<SourceStats>(
          `SELECT COALESCE(sum(accepted), 0)::bigint AS accepted, COALESCE(sum(duplicates), 0)::bigint AS duplicates,
             COALESCE(sum(rejected), 0)::bigint AS rejected, COALESCE(sum(suppressed), 0)::bigint AS suppressed
           FROM source_counters WHERE source_id = $1`,
          [pgText(id)],
        )
      )[0],
    countRejected: (id, count) => addToCounter('rejected', id, count),
    countSuppressed: (id, count) => addToCounter('suppressed', id, count),
  }
}
