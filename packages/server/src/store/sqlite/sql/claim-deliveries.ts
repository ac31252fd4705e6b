/** Claims on SQLite, the hot read path of the delivery engine: pick and lease due deliveries. */
import type { StatementSync } from 'node:sqlite'
import type { ClaimDeliveriesSql, ClaimRow, ClaimSpec } from '../../tables/deliveries.ts'
import type { SqliteDatabase } from '../database.ts'

/**
 * Past this many, `claimedDestinations` starts over (what is not found there is read from the
 * deliveries themselves): far above what the engine holds claimed at once (in flight plus unrecorded
 * stays below twice its concurrency), so only leases never recorded nor released (a claimer that
 * stopped) fill it.
 */
const CLAIMED_DESTINATIONS_MAX = 100_000

const claimedByDatabase = new WeakMap<SqliteDatabase, Map<number, string>>()

/**
 * The destination of each delivery claimed on this connection and not recorded yet, by delivery id:
 * recording an outcome copies it onto the attempt rows without reading it back from the row (an
 * UPDATE with RETURNING cost ~13% of the store's SQL work a delivery). A delivery's destination never
 * changes and its id is never reused (AUTOINCREMENT), so an entry is never wrong, only missing.
 */
export function claimedDestinations(db: SqliteDatabase): Map<number, string> {
  let claimed = claimedByDatabase.get(db)
  if (!claimed) {
    claimed = new Map()
    claimedByDatabase.set(db, claimed)
  }
  return claimed
}

/** id, attempt_count, first_attempt_at, closed_urls, replay_id, payload, source_id, received_at. */
type PickedRow = [number, number, number | null, string | null, string | null, string, string, number]

/**
 * Due deliveries with their messages: cheaper than an `UPDATE … RETURNING` and a second read for the
 * messages (~7% of the store's SQL work a delivery). Rows come as arrays, made into objects here (node's
 * own row objects cost ~5% more). Its LIMIT is `+?`, as every LIMIT of this store (see `sql` in
 * database.ts). A claimed delivery's message exists: deleting a message deletes its deliveries (FK
 * cascade).
 */
function pickStatement(db: SqliteDatabase): StatementSync {
  const statement = db.sql(
    `SELECT d.id, d.attempt_count, d.first_attempt_at, d.closed_urls, d.replay_id,
       m.payload, m.source_id, m.received_at
     FROM (SELECT id, message_pk, attempt_count, first_attempt_at, closed_urls, replay_id FROM deliveries
           WHERE destination_id = ? AND status IN ('pending', 'retrying') AND next_attempt_at <= ?
             AND batch_id IS NULL AND (lease_until IS NULL OR lease_until <= ?)
           ORDER BY next_attempt_at LIMIT +?) d
     JOIN messages m ON m.pk = d.message_pk`,
  )
  statement.setReturnArrays(true)
  return statement
}

export function sqliteClaimDeliveries(db: SqliteDatabase): ClaimDeliveriesSql {
  const claim = claimIn(db)
  // A lease lost on power failure only means the delivery is attempted again sooner. The pick and the
  // lease are two statements, so they share a write transaction: no other connection claims between.
  return (destinationId, limit, now, leaseUntil) =>
    db.withoutFsync(() => db.transaction(() => claim({ destinationId, limit, now, leaseUntil })))
}

/**
 * The claim itself, in the write transaction the caller opened (record-outcomes.ts claims inside its
 * own; sqliteClaimDeliveries opens one): no other connection can lease between the pick and the lease.
 */
export function claimIn(db: SqliteDatabase): (spec: ClaimSpec) => ClaimRow[] {
  const claimed = claimedDestinations(db)
  let select: StatementSync | undefined
  return ({ destinationId, limit, now, leaseUntil }) => {
    if (!db.inTransaction) throw new Error('a claim runs inside a write transaction')
    // The due deliveries with their messages in one read (pickStatement), then their leases.
    select ??= pickStatement(db)
    const picked = select.all(destinationId, now, now, limit) as unknown as PickedRow[]
    if (picked.length === 0) return []
    const rows: ClaimRow[] = picked.map((row) => ({
      id: row[0],
      attempt_count: row[1],
      first_attempt_at: row[2],
      closed_urls: row[3],
      replay_id: row[4],
      payload: row[5],
      source_id: row[6],
      received_at: row[7],
    }))
    db.sql(
      'UPDATE deliveries SET lease_until = ?, updated_at = ? WHERE id IN (SELECT value FROM json_each(?))',
    ).run(leaseUntil, now, JSON.stringify(rows.map((row) => row.id)))
    if (claimed.size > CLAIMED_DESTINATIONS_MAX) claimed.clear()
    for (const row of rows) claimed.set(row.id, destinationId)
    return rows
  }
}
