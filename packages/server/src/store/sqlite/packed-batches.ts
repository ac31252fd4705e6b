/**
 * A batching destination's due messages and claimed batches cross from the store thread to the main
 * thread packed (packed-text.ts), each message as its stored JSON text, parsed on arrival: parsing
 * on the store thread and structured-cloning every parsed message cost several times one parse of
 * its text, twice per batched message (once to form its batch, once to send it).
 *
 * Candidates: the row count, then per row: next_attempt_at and the delivery as a claimed one (id,
 * received_at, attempt_count, first_attempt_at, source_id, closed_urls, replay_id, payload).
 * Claimed batches: the batch count, then per batch: id, attempt_count, first_attempt_at, closed_urls;
 * then the member count, and per member: batch_id and the delivery as a claimed one.
 */
import type { ClaimRow } from '../tables/deliveries.ts'
import type {
  BatchClaimRow,
  BatchMemberRow,
  CandidateRow,
  ClaimedBatchRows,
} from '../tables/delivery-batches.ts'
import { unpackClaimRow } from './packed-claims.ts'
import { type Packed, Packer, Unpacker } from './packed-text.ts'

export function packCandidates(rows: CandidateRow[]): Packed {
  const out = new Packer()
  out.number(rows.length)
  for (const row of rows) {
    out.number(Number(row.next_attempt_at))
    packMember(out, row)
  }
  return out.finish()
}

export function unpackCandidates(packed: Packed): CandidateRow[] {
  const input = new Unpacker(packed)
  const rows: CandidateRow[] = new Array(input.number())
  for (let i = 0; i < rows.length; i++) {
    const next_attempt_at = input.number()
    rows[i] = { next_attempt_at, ...unpackClaimRow(input) }
  }
  return rows
}

export function packClaimedBatches({ batches, members }: ClaimedBatchRows): Packed {
  const out = new Packer()
  out.number(batches.length)
  for (const batch of batches) {
    out.number(batch.id)
    out.number(batch.attempt_count)
    out.maybe(batch.first_attempt_at === null ? null : Number(batch.first_attempt_at))
    out.string(batch.closed_urls)
  }
  out.number(members.length)
  for (const member of members) {
    out.number(member.batch_id)
    packMember(out, member)
  }
  return out.finish()
}

export function unpackClaimedBatches(packed: Packed): ClaimedBatchRows {
  const input = new Unpacker(packed)
  const batches: BatchClaimRow[] = new Array(input.number())
  for (let i = 0; i < batches.length; i++) {
    batches[i] = {
      id: input.number(),
      attempt_count: input.number(),
      first_attempt_at: input.maybe(),
      closed_urls: input.string(),
    }
  }
  const members: BatchMemberRow[] = new Array(input.number())
  for (let i = 0; i < members.length; i++) {
    const batch_id = input.number()
    members[i] = { batch_id, ...unpackClaimRow(input) }
  }
  return { batches, members }
}

function packMember(out: Packer, row: ClaimRow): void {
  out.number(row.id)
  out.number(Number(row.received_at))
  out.number(row.attempt_count)
  out.maybe(row.first_attempt_at === null ? null : Number(row.first_attempt_at))
  out.string(row.source_id)
  out.string(row.closed_urls)
  out.string(row.replay_id)
  out.string(row.payload)
}
