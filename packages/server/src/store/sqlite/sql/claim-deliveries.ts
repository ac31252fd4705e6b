/** Claims on SQLite, the hot read path of the delivery engine: pick and lease due deliveries. */
import type { ClaimDeliveriesSql, ClaimRow, ClaimSpec } from '../../tables/deliveries.ts'
import type { SqliteDatabase } from '../database.ts'

export function sqliteClaimDeliveries(db: SqliteDatabase): ClaimDeliveriesSql {
  const claim = claimIn(db)
  // A lease lost on power failure only means the delivery is attempted again sooner.
  return (destinationId, limit, now, leaseUntil) =>
    db.withoutFsync(() => claim({ destinationId, limit, now, leaseUntil }))
}

/** The claim itself, in whatever transaction is open (record-outcomes.ts claims inside its own). */
export function claimIn(db: SqliteDatabase): (spec: ClaimSpec) => ClaimRow[] {
  return ({ destinationId, limit, now, leaseUntil }) => {
    // One statement picks and leases, so two claimers can never take the same delivery. Its LIMIT is
    // `+?`, as every LIMIT of this store (see `sql` in database.ts).
    const claim = db.sql(
      `UPDATE deliveries SET lease_until = ?, updated_at = ?
       WHERE id IN (
         SELECT id FROM deliveries
         WHERE destination_id = ? AND status IN ('pending', 'retrying') AND next_attempt_at <= ? AND batch_id IS NULL
           AND (lease_until IS NULL OR lease_until <= ?)
         ORDER BY next_attempt_at LIMIT +?)
       RETURNING id, message_pk, attempt_count, first_attempt_at, closed_urls, replay_id`,
    )
    const claimed = claim.all(leaseUntil, now, destinationId, now, now, limit) as unknown as (Omit<
      ClaimRow,
      'payload' | 'source_id' | 'received_at'
    > & {
      message_pk: number
    })[]
    if (claimed.length === 0) return []
    type MessagePart = Pick<ClaimRow, 'payload' | 'source_id' | 'received_at'>
    const messages = new Map(
      (
        db
          .sql(
            'SELECT pk, payload, source_id, received_at FROM messages WHERE pk IN (SELECT value FROM json_each(?))',
          )
          .all(JSON.stringify(claimed.map((row) => row.message_pk))) as unknown as (MessagePart & {
          pk: number
        })[]
      ).map((row) => [row.pk, row]),
    )
    return claimed.map((row) => {
      // A claimed delivery's message exists: deleting a message deletes its deliveries (FK cascade).
      const message = messages.get(row.message_pk)!
      return {
        id: row.id,
        attempt_count: row.attempt_count,
        first_attempt_at: row.first_attempt_at,
        closed_urls: row.closed_urls,
        replay_id: row.replay_id,
        payload: message.payload,
        source_id: message.source_id,
        received_at: message.received_at,
      }
    })
  }
}
