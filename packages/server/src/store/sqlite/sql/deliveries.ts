import type { SQLInputValue } from 'node:sqlite'
import {
  type BacklogRow,
  type DeliveriesSql,
  type DeliveryRow,
  replayOnceEach,
  replayWholeBatch,
  type StateCountRow,
} from '../../tables/deliveries.ts'
import type { SqliteDatabase } from '../database.ts'
import { claimedDestinations } from './claim-deliveries.ts'

/** deliveries, outside ingest (ingest.ts), claims (claim-deliveries.ts) and outcomes (record-outcomes.ts). */
export function sqliteDeliveries(db: SqliteDatabase): DeliveriesSql {
  const withMessage =
    'SELECT d.*, m.source_id, m.message_id, m.type, m.payload FROM deliveries d JOIN messages m ON m.pk = d.message_pk'
  const claimed = claimedDestinations(db)
  return {
    release(ids) {
      for (const id of ids) claimed.delete(id)
      db.sql('UPDATE deliveries SET lease_until = NULL WHERE id IN (SELECT value FROM json_each(?))').run(
        JSON.stringify(ids),
      )
    },
    nextDueAt(destinationId, now) {
      const row = db
        .sql(
          `SELECT next_attempt_at AS at FROM deliveries
           WHERE destination_id = ? AND status IN ('pending', 'retrying') AND batch_id IS NULL
             AND (lease_until IS NULL OR lease_until <= ?)
           ORDER BY next_attempt_at LIMIT 1`,
        )
        .get(destinationId, now) as { at: number } | undefined
      return row?.at ?? null
    },
    list(destinationId, filter) {
      const where = ['d.destination_id = ?']
      const params: SQLInputValue[] = [destinationId]
      if (filter.status !== undefined) {
        where.push('d.status = ?')
        params.push(filter.status)
      }
      if (filter.before !== undefined) {
        where.push('d.id < ?')
        params.push(filter.before)
      }
      if (filter.type !== undefined) {
        where.push('m.type = ?')
        params.push(filter.type)
      }
      if (filter.userId !== undefined) {
        where.push("json_extract(m.payload, '$.userId') = ?")
        params.push(filter.userId)
      }
      if (filter.since !== undefined) {
        where.push('d.created_at >= ?')
        params.push(filter.since)
      }
      if (filter.until !== undefined) {
        where.push('d.created_at < ?')
        params.push(filter.until)
      }
      params.push(filter.limit)
      return db
        .sql(`${withMessage} WHERE ${where.join(' AND ')} ORDER BY d.id DESC LIMIT +?`)
        .all(...params) as unknown as DeliveryRow[]
    },
    get: (id) => db.sql(`${withMessage} WHERE d.id = ?`).get(id) as DeliveryRow | undefined,
    replay(filter, now) {
      // A fresh start: a new retry window, every URL open again. attempt_count and the attempts stay
      // as history. Only final deliveries are touched: a pending or retrying one is already scheduled.
      // A delivery in a batch replays its whole batch: the batch and every member start again.
      // By filter, each call at most once (replayOnceEach; a batch only if all of it may go).
      const fresh = `status = 'pending', dead_lettered = 0, next_attempt_at = ?,
        first_attempt_at = NULL, closed_urls = NULL, lease_until = NULL, updated_at = ?`
      const [where, params, whole]: [string, SQLInputValue[], string] =
        'ids' in filter
          ? [
              "id IN (SELECT value FROM json_each(?)) AND status IN ('failed', 'delivered')",
              [JSON.stringify(filter.ids)],
              '',
            ]
          : [
              `destination_id = ? AND status = ? AND created_at >= ? AND ${replayOnceEach(filter.status)}`,
              [filter.destinationId, filter.status, filter.since ?? 0],
              `AND ${replayWholeBatch(filter.status)}`,
            ]
      return db.transaction(() => {
        const alone = db
          .sql(`UPDATE deliveries SET ${fresh} WHERE ${where} AND batch_id IS NULL`)
          .run(now, now, ...params)
        const batches = (
          db
            .sql(
              `UPDATE delivery_batches SET ${fresh}
               WHERE status IN ('failed', 'delivered')
                 AND id IN (SELECT batch_id FROM deliveries WHERE ${where} AND batch_id IS NOT NULL) ${whole}
               RETURNING id`,
            )
            .all(now, now, ...params) as { id: number }[]
        ).map((row) => row.id)
        if (batches.length === 0) return Number(alone.changes)
        const members = db
          .sql(`UPDATE deliveries SET ${fresh} WHERE batch_id IN (SELECT value FROM json_each(?))`)
          .run(now, now, JSON.stringify(batches))
        return Number(alone.changes) + Number(members.changes)
      })
    },
    deadLetterWaiting(destinationId, startedBefore, now) {
      const expired = `destination_id = ? AND status IN ('pending', 'retrying')
        AND (lease_until IS NULL OR lease_until <= ?) AND COALESCE(first_attempt_at, created_at) <= ?`
      const dead = "status = 'failed', dead_lettered = 1, lease_until = NULL, updated_at = ?"
      return db.transaction(() => {
        const alone = db
          .sql(`UPDATE deliveries SET ${dead} WHERE ${expired} AND batch_id IS NULL`)
          .run(now, destinationId, now, startedBefore)
        const batches = db
          .sql(`UPDATE delivery_batches SET ${dead} WHERE ${expired} RETURNING id`)
          .all(now, destinationId, now, startedBefore) as { id: number }[]
        if (batches.length === 0) return Number(alone.changes)
        const members = db
          .sql(`UPDATE deliveries SET ${dead} WHERE batch_id IN (SELECT value FROM json_each(?))`)
          .run(now, JSON.stringify(batches.map((row) => row.id)))
        return Number(alone.changes) + Number(members.changes)
      })
    },
    count(filter) {
      const where: string[] = []
      const params: SQLInputValue[] = []
      if (filter.destinationId !== undefined) {
        where.push('destination_id = ?')
        params.push(filter.destinationId)
      }
      if (filter.status !== undefined) {
        where.push('status = ?')
        params.push(filter.status)
      }
      const clause = where.length ? ` WHERE ${where.join(' AND ')}` : ''
      return (db.sql(`SELECT COUNT(*) AS n FROM deliveries${clause}`).get(...params) as { n: number }).n
    },
    countByState: (destinationId) =>
      db
        .sql(
          'SELECT status, dead_lettered, COUNT(*) AS n FROM deliveries WHERE destination_id = ? GROUP BY status, dead_lettered',
        )
        .all(destinationId) as unknown as StateCountRow[],
    // Deliveries in no batch from the due index (it holds only those), batch members through their
    // open batches (CROSS JOIN: from the batches, not from every delivery that was ever in one).
    backlog: () =>
      db
        .sql(
          `SELECT destination_id, status, COUNT(*) AS n, MIN(next_attempt_at) AS oldest_due_at FROM (
             SELECT destination_id, status, next_attempt_at FROM deliveries
             WHERE status IN ('pending', 'retrying') AND batch_id IS NULL
             UNION ALL
             SELECT d.destination_id, d.status, d.next_attempt_at FROM delivery_batches b
             CROSS JOIN deliveries d ON d.batch_id = b.id
             WHERE b.status IN ('pending', 'retrying') AND d.status IN ('pending', 'retrying'))
           GROUP BY destination_id, status`,
        )
        .all() as unknown as BacklogRow[],
    discard(deliveryIds) {
      db.transaction(() => {
        const batches = (
          db
            .sql(
              'SELECT DISTINCT batch_id FROM deliveries WHERE id IN (SELECT value FROM json_each(?)) AND batch_id IS NOT NULL',
            )
            .all(JSON.stringify(deliveryIds)) as { batch_id: number }[]
        ).map((row) => row.batch_id)
        db.sql('DELETE FROM deliveries WHERE id IN (SELECT value FROM json_each(?))').run(
          JSON.stringify(deliveryIds),
        )
        if (batches.length > 0)
          db.sql(
            `DELETE FROM delivery_batches WHERE id IN (SELECT value FROM json_each(?))
               AND NOT EXISTS (SELECT 1 FROM deliveries WHERE batch_id = delivery_batches.id)`,
          ).run(JSON.stringify(batches))
      })
    },
  }
}
