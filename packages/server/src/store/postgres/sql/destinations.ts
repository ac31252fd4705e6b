import { randomInt } from 'node:crypto'
import type { PoolClient } from 'pg'
import type {
  ConnectionRow,
  DestinationRow,
  DestinationsSql,
  GatedCountRow,
} from '../../tables/destinations.ts'
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'
import { COUNTER_SHARDS } from './sources.ts'

/** Replaces a destination's connections; unknown source ids are skipped (as SQLite's INSERT OR IGNORE… FK). */
async function replaceConnections(
  client: PoolClient,
  destinationId: string,
  sourceIds: string[],
): Promise<void> {
  await client.query('DELETE FROM destination_sources WHERE destination_id = $1', [destinationId])
  if (sourceIds.length === 0) return
  await client.query(
    `INSERT INTO destination_sources (destination_id, source_id)
     SELECT $1, s.id FROM sources s WHERE s.id = ANY($2)
     ON CONFLICT DO NOTHING`,
    [destinationId, sourceIds.map((id) => pgText(id))],
  )
}

/** destinations and destination_sources (their connections to sources) on PostgreSQL. */
/** Adds to destinations' gated counters (a random shard), inside the caller's transaction. */
export async function addGatedCounts(client: PoolClient, rows: readonly GatedCountRow[]): Promise<void> {
  if (rows.length === 0) return
  await client.query(
    `INSERT INTO destination_counters AS g (destination_id, shard, filtered, sampled_out)
       SELECT id, $4, filtered, sampled_out FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS r(id, filtered, sampled_out)
     ON CONFLICT (destination_id, shard) DO UPDATE
       SET filtered = g.filtered + EXCLUDED.filtered, sampled_out = g.sampled_out + EXCLUDED.sampled_out`,
    [
      rows.map((row) => row.destination_id),
      rows.map((row) => row.filtered),
      rows.map((row) => row.sampled_out),
      randomInt(COUNTER_SHARDS),
    ],
  )
}

export function postgresDestinations(db: PostgresDatabase): DestinationsSql {
  return {
    insert: (row, sourceIds) =>
      db.transaction(async (client) => {
        await client.query(
          'INSERT INTO destinations (id, name, type, enabled, settings, routing, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
          [
            row.id,
            pgText(row.name),
            row.type,
            row.enabled,
            row.settings,
            row.routing,
            row.created_at,
            row.updated_at,
          ],
        )
        await replaceConnections(client, row.id, sourceIds)
      }),
    list: () => db.query<DestinationRow>('SELECT * FROM destinations ORDER BY created_at, id'),
    get: async (id) =>
      (await db.query<DestinationRow>('SELECT * FROM destinations WHERE id = $1', [pgText(id)]))[0],
    gatedCounts: (destinationId) =>
      destinationId === undefined
        ? db.query<GatedCountRow>(
            'SELECT destination_id, sum(filtered)::float8 AS filtered, sum(sampled_out)::float8 AS sampled_out FROM destination_counters GROUP BY destination_id',
          )
        : db.query<GatedCountRow>(
            'SELECT destination_id, sum(filtered)::float8 AS filtered, sum(sampled_out)::float8 AS sampled_out FROM destination_counters WHERE destination_id = $1 GROUP BY destination_id',
            [pgText(destinationId)],
          ),
    connections: (destinationId) =>
      destinationId === undefined
        ? db.query<ConnectionRow>(
            'SELECT destination_id, source_id FROM destination_sources ORDER BY source_id',
          )
        : db.query<ConnectionRow>(
            'SELECT destination_id, source_id FROM destination_sources WHERE destination_id = $1 ORDER BY source_id',
            [pgText(destinationId)],
          ),
    update: (id, change, sourceIds) =>
      db.transaction(async (client) => {
        const result = await client.query(
          `UPDATE destinations SET name = COALESCE($2, name), enabled = COALESCE($3, enabled),
             settings = COALESCE($4, settings),
             routing = CASE WHEN $4::text IS NULL THEN routing ELSE $6 END, updated_at = $5
           WHERE id = $1`,
          [
            pgText(id),
            pgText(change.name),
            change.enabled,
            change.settings,
            change.updatedAt,
            change.routing,
          ],
        )
        if ((result.rowCount ?? 0) === 0) return false
        if (sourceIds) await replaceConnections(client, pgText(id), sourceIds)
        return true
      }),
    // Deliveries and attempts have no FKs (see 001_init.sql): removed here, in order (as for sources).
    // As deleting a source: locking its deliveries may deadlock with outcome commits; run again if so.
    delete: (id) =>
      db.transaction(async (client) => {
        await client.query('SET LOCAL statement_timeout = 0') // as deleting a source: may be millions of rows
        const gone = await client.query('DELETE FROM destinations WHERE id = $1', [pgText(id)])
        if ((gone.rowCount ?? 0) === 0) return false
        await client.query(
          'WITH locked AS (SELECT id FROM deliveries WHERE destination_id = $1 FOR UPDATE) SELECT count(*) FROM locked',
          [pgText(id)],
        )
        await client.query('DELETE FROM attempts WHERE destination_id = $1', [pgText(id)])
        await client.query('DELETE FROM deliveries WHERE destination_id = $1', [pgText(id)])
        await client.query('DELETE FROM batch_attempts WHERE destination_id = $1', [pgText(id)])
        await client.query('DELETE FROM delivery_batches WHERE destination_id = $1', [pgText(id)])
        return true
      }),
    replaceSettings: async (id, from, to) =>
      (
        await db.query('UPDATE destinations SET settings = $3 WHERE id = $1 AND settings = $2 RETURNING id', [
          id,
          from,
          to,
        ])
      ).length > 0,
  }
}
