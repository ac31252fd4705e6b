/**
 * A batching destination's reads with each message as its stored JSON text, unparsed: what the
 * threaded SQLite store sends across threads (packed; parsed on the other side), and what the core
 * parses itself everywhere else.
 */
import type { CandidateRow, ClaimedBatchRows } from '../tables/delivery-batches.ts'
import type { StoreSql } from './store-sql.ts'

/** `batchCandidates`, as rows. */
export async function batchCandidateRows(
  sql: Pick<StoreSql, 'deliveryBatches'>,
  destinationId: string,
  limit: number,
  now: number,
): Promise<CandidateRow[]> {
  if (limit <= 0) return []
  return sql.deliveryBatches.candidates(destinationId, limit, now)
}

/** `claimBatches`, as rows. */
export async function claimBatchRows(
  sql: Pick<StoreSql, 'deliveryBatches'>,
  destinationId: string,
  limit: number,
  now: number,
  leaseMs: number,
): Promise<ClaimedBatchRows> {
  if (limit <= 0) return { batches: [], members: [] }
  return sql.deliveryBatches.claim(destinationId, limit, now, now + leaseMs)
}
