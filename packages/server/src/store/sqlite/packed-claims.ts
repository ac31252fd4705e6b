/**
 * Claimed deliveries cross from the store thread to the main thread packed (packed-text.ts), each
 * message as its stored JSON text, parsed on arrival: one copy of the text instead of a clone of
 * every claimed row's properties.
 *
 * Layout: the claim count, then per claim its row count and per row: id, received_at, attempt_count,
 * first_attempt_at, source_id, closed_urls, replay_id, payload.
 */
import type { ClaimRow } from '../tables/deliveries.ts'
import { type Packed, Packer, Unpacker } from './packed-text.ts'

export function packClaims(claims: ClaimRow[][]): Packed {
  const out = new Packer()
  out.number(claims.length)
  for (const rows of claims) {
    out.number(rows.length)
    for (const row of rows) {
      out.number(row.id)
      out.number(Number(row.received_at))
      out.number(row.attempt_count)
      out.maybe(row.first_attempt_at)
      out.string(row.source_id)
      out.string(row.closed_urls)
      out.string(row.replay_id)
      out.string(row.payload)
    }
  }
  return out.finish()
}

export function unpackClaims(packed: Packed): ClaimRow[][] {
  const input = new Unpacker(packed)
  const claims: ClaimRow[][] = new Array(input.number())
  for (let c = 0; c < claims.length; c++) {
    const rows: ClaimRow[] = new Array(input.number())
    for (let r = 0; r < rows.length; r++) rows[r] = unpackClaimRow(input)
    claims[c] = rows
  }
  return claims
}

/** One claimed row, in the order the packer wrote it (also the members of packed batches). */
export function unpackClaimRow(input: Unpacker): ClaimRow {
  return {
    id: input.number(),
    received_at: input.number(),
    attempt_count: input.number(),
    first_attempt_at: input.maybe(),
    source_id: input.string()!,
    closed_urls: input.string(),
    replay_id: input.string(),
    payload: input.string()!,
  }
}
