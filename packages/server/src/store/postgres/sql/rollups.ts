import {
  attemptMinutesSql,
  BUCKET_COLUMNS,
  EARLIEST_ATTEMPT_SQL,
  type RollupsSql,
  toMinuteRow,
} from '../../tables/rollups.ts'
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'

/**
 * delivery_rollups and rollup_progress on PostgreSQL (see tables/rollups.ts). Several processes may roll
 * up the same minutes at once: a complete minute's figures are the same whoever computes them, so the
 * second writer's rows are ignored and the progress only moves forward.
 */
export function postgresRollups(db: PostgresDatabase): RollupsSql {
  const columns = ['destination_id', 'minute', 'succeeded', 'failed', ...BUCKET_COLUMNS].join(', ')
  const marker = (n: number) => `$${n}`
  return {
    through: async () =>
      (
        await db.query<{ through: number }>("SELECT through FROM rollup_progress WHERE name = 'deliveries'")
      )[0]?.through ?? null,
    earliestAttempt: async () => (await db.query<{ at: number | null }>(EARLIEST_ATTEMPT_SQL))[0]?.at ?? null,
    rollUp: (from, to) =>
      db.transaction(async (client) => {
        const inserted = await client.query(
          `INSERT INTO delivery_rollups (${columns}) ${attemptMinutesSql(marker, false)} ON CONFLICT DO NOTHING`,
          [from, to],
        )
        await client.query(
          `INSERT INTO rollup_progress (name, through) VALUES ('deliveries', $1)
           ON CONFLICT (name) DO UPDATE SET through = GREATEST(rollup_progress.through, EXCLUDED.through)`,
          [to],
        )
        return inserted.rowCount ?? 0
      }),
    rows: async (destinationId, from, to) =>
      (
        await db.query(
          'SELECT * FROM delivery_rollups WHERE destination_id = $1 AND minute >= $2 AND minute < $3 ORDER BY minute',
          [pgText(destinationId), from, to],
        )
      ).map(toMinuteRow),
    live: async (destinationId, from, to) =>
      (await db.query(attemptMinutesSql(marker, true), [from, to, pgText(destinationId)])).map(toMinuteRow),
    sourceMinutes: async (sourceId, from, to) =>
      (
        await db.query<{ minute: string; accepted: string }>(
          `SELECT minute, sum(accepted) AS accepted FROM source_rollups
           WHERE source_id = $1 AND minute >= $2 AND minute < $3 GROUP BY minute ORDER BY minute`,
          [pgText(sourceId), from, to],
        )
      ).map((row) => ({ minute: Number(row.minute), accepted: Number(row.accepted) })),
  }
}

/**
 * A common table expression for the ingest statement (ingest.ts): adds its stored calls (`accepted`)
 * to source_rollups, one row per source and minute of receipt, in the counters' random shard ($11), so
 * the figures commit with the messages they count and concurrent API processes rarely share a row.
 */
export const SOURCE_MINUTES_CTE = `source_minutes AS (
  INSERT INTO source_rollups AS r (source_id, minute, shard, accepted)
  SELECT source_id, received_at / 60000 * 60000, $11, count(*) FROM accepted
  GROUP BY source_id, received_at / 60000 * 60000
  ORDER BY 1, 2
  ON CONFLICT (source_id, minute, shard) DO UPDATE SET accepted = r.accepted + EXCLUDED.accepted
)`
