import {
  type BacklogRow,
  type DeliveriesSql,
  type DeliveryRow,
  replayOnceEach,
  replayWholeBatch,
  type StateCountRow,
} from '../../tables/deliveries.ts'
import { pgText } from '../connection.ts'
import type { PostgresDatabase } from '../database.ts'
import { REPLAY_TURN } from './replays.ts'

/**
 * deliveries on PostgreSQL, outside ingest (ingest.ts), claims (claim-deliveries.ts) and outcomes
 * (record-outcomes.ts).
 */
export function postgresDeliveries(db: PostgresDatabase): DeliveriesSql {
  const withMessage =
    'SELECT d.*, m.source_id, m.message_id, m.type, m.payload FROM deliveries d JOIN messages m ON m.pk = d.message_pk'
  return {
    async release(ids) {
      await db.query('UPDATE deliveries SET lease_until = NULL WHERE id = ANY($1::bigint[])', [ids])
    },
    nextDueAt: async (destinationId, now) => {
      const [row] = await db.query<{ at: number }>(
        `SELECT next_attempt_at AS at FROM deliveries
         WHERE destination_id = $1 AND status IN ('pending', 'retrying') AND batch_id IS NULL
           AND (lease_until IS NULL OR lease_until <= $2)
         ORDER BY next_attempt_at LIMIT 1`,
        [pgText(destinationId), now],
      )
      return row?.at ?? null
    },
    list: (destinationId, filter) =>
      db.query<DeliveryRow>(
        `${withMessage}
         WHERE d.destination_id = $1 AND ($2::text IS NULL OR d.status = $2) AND ($3::bigint IS NULL OR d.id < $3)
           AND ($5::text IS NULL OR m.type = $5)
           AND ($6::text IS NULL OR (m.payload::jsonb ->> 'userId') = $6)
           AND ($7::bigint IS NULL OR d.created_at >= $7) AND ($8::bigint IS NULL OR d.created_at < $8)
         ORDER BY d.id DESC LIMIT $4`,
        [
          pgText(destinationId),
          filter.status ?? null,
          filter.before ?? null,
          filter.limit,
          filter.type ?? null,
          filter.userId === undefined ? null : pgText(filter.userId),
          filter.since ?? null,
          filter.until ?? null,
        ],
      ),
    get: async (id) => (await db.query<DeliveryRow>(`${withMessage} WHERE d.id = $1`, [id]))[0],
    replay: (filter, now) => {
      // A fresh start: a new retry window, every URL open again. attempt_count and the attempts stay as
      // history. Only final deliveries are touched: a pending or retrying one is already scheduled (and
      // may be leased by a worker right now).
      // A delivery in a batch replays its whole batch: the batch and every member start again.
      const fresh = `status = 'pending', dead_lettered = false, next_attempt_at = $1,
        first_attempt_at = NULL, closed_urls = NULL, lease_until = NULL, updated_at = $1`
      const [where, params] =
        'ids' in filter
          ? ["id = ANY($2::bigint[]) AND status IN ('failed', 'delivered')", [now, filter.ids]]
          : [
              `destination_id = $2 AND status = $3 AND created_at >= $4 AND ${replayOnceEach(filter.status)}`,
              [now, pgText(filter.destinationId), filter.status, filter.since ?? 0],
            ]
      const byFilter = !('ids' in filter)
      return updateWithBatches(
        db,
        fresh,
        `${where} AND batch_id IS NULL`,
        `status IN ('failed', 'delivered')
           AND id IN (SELECT batch_id FROM deliveries WHERE ${where} AND batch_id IS NOT NULL)
           ${byFilter ? `AND ${replayWholeBatch(filter.status)}` : ''}`,
        params,
        now,
        // Replay steps of the destination decide what to skip from the same rows: take turns with them.
        byFilter ? filter.destinationId : undefined,
      )
    },
    deadLetterWaiting: (destinationId, startedBefore, now) => {
      const expired = `destination_id = $2 AND status IN ('pending', 'retrying')
        AND (lease_until IS NULL OR lease_until <= $1) AND COALESCE(first_attempt_at, created_at) <= $3`
      const dead = "status = 'failed', dead_lettered = true, lease_until = NULL, updated_at = $1"
      const params = [now, pgText(destinationId), startedBefore]
      return updateWithBatches(db, dead, `${expired} AND batch_id IS NULL`, expired, params, now)
    },
    count: async (filter) => {
      const [row] = await db.query<{ n: number }>(
        `SELECT count(*) AS n FROM deliveries
         WHERE ($1::text IS NULL OR destination_id = $1) AND ($2::text IS NULL OR status = $2)`,
        [filter.destinationId === undefined ? null : pgText(filter.destinationId), filter.status ?? null],
      )
      return row?.n ?? 0
    },
    countByState: (destinationId) =>
      db.query<StateCountRow>(
        'SELECT status, dead_lettered, count(*) AS n FROM deliveries WHERE destination_id = $1 GROUP BY status, dead_lettered',
        [pgText(destinationId)],
      ),
    backlog: () =>
      db.query<BacklogRow>(
        `SELECT destination_id, status, count(*) AS n, min(next_attempt_at) AS oldest_due_at FROM deliveries
         WHERE status IN ('pending', 'retrying') GROUP BY destination_id, status`,
      ),
    discard: async (deliveryIds) => {
      await db.transaction(async (client) => {
        // No foreign keys here (see 001_init.sql): their attempts go with them.
        await client.query('DELETE FROM attempts WHERE delivery_id = ANY($1::bigint[])', [deliveryIds])
        const batches = await client.query<{ batch_id: number | null }>(
          'DELETE FROM deliveries WHERE id = ANY($1::bigint[]) RETURNING batch_id',
          [deliveryIds],
        )
        const batchIds = [
          ...new Set(batches.rows.flatMap((row) => (row.batch_id === null ? [] : [row.batch_id]))),
        ]
        if (batchIds.length > 0)
          await client.query(
            `DELETE FROM delivery_batches b WHERE b.id = ANY($1::bigint[])
               AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.batch_id = b.id)`,
            [batchIds],
          )
      })
    },
  }
}

/**
 * Sets `set` (where `$1` is `now`) on the deliveries `aloneWhere` picks and on the batches
 * `batchesWhere` picks, with every member of those batches, in one transaction; how many deliveries.
 */
function updateWithBatches(
  db: PostgresDatabase,
  set: string,
  aloneWhere: string,
  batchesWhere: string,
  params: unknown[],
  now: number,
  replayTurnOf?: string,
): Promise<number> {
  return db.retrying(() =>
    db.transaction(async (client) => {
      if (replayTurnOf !== undefined) await client.query(REPLAY_TURN, [pgText(replayTurnOf)])
      const alone = await client.query(`UPDATE deliveries SET ${set} WHERE ${aloneWhere}`, params)
      const batches = await client.query(
        `UPDATE delivery_batches SET ${set} WHERE ${batchesWhere} RETURNING id`,
        params,
      )
      if (batches.rows.length === 0) return alone.rowCount ?? 0
      const members = await client.query(`UPDATE deliveries SET ${set} WHERE batch_id = ANY($2::bigint[])`, [
        now,
        batches.rows.map((row: { id: number }) => row.id),
      ])
      return (alone.rowCount ?? 0) + (members.rowCount ?? 0)
    }),
  )
}
