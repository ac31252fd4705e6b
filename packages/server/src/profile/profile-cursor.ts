/**
 * Where the profile worker stands in the message log. Messages are consumed in pk order, but on
 * PostgreSQL pks are drawn before their transaction commits, so a lower pk can become visible after a
 * higher one (and a dropped duplicate or a rolled-back ingest leaves a pk that never appears). So the
 * cursor is a high-water mark plus the ranges below it that were empty when passed ("gaps"); gaps are
 * re-read on every batch until filled or until no transaction that drew those pks can still commit.
 */

/** [fromPk, toPk, seenAt]. */
export type Gap = [number, number, number]

/**
 * How long an empty pk range is watched for a late commit. An ingest is one statement, which
 * PostgreSQL cancels after its statement timeout (30 s by default); this leaves ample margin.
 */
export const GAP_WATCH_MS = 120_000

/** Most gap ranges kept; beyond it the oldest are given up (only a pathological log gets there). */
const MAX_GAPS = 1_000

export interface CursorAdvance {
  highPk: number
  gaps: Gap[]
}

/**
 * The cursor after consuming `foundInGaps` (pks read from inside the gaps) and `fresh` (pks read above
 * `highPk`, ascending), at `now`.
 */
export function advanceCursor(
  highPk: number,
  gaps: Gap[],
  foundInGaps: number[],
  fresh: number[],
  now: number,
): CursorAdvance {
  const found = new Set(foundInGaps)
  const remaining: Gap[] = []
  for (const [from, to, seenAt] of gaps) {
    if (seenAt < now - GAP_WATCH_MS) continue
    let start = from
    for (const pk of foundInGaps) {
      if (pk < from || pk > to || !found.has(pk)) continue
      if (pk > start) remaining.push([start, pk - 1, seenAt])
      start = pk + 1
    }
    if (start <= to) remaining.push([start, to, seenAt])
  }
  let high = highPk
  for (const pk of fresh) {
    if (pk > high + 1) remaining.push([high + 1, pk - 1, now])
    high = pk
  }
  return { highPk: high, gaps: remaining.slice(-MAX_GAPS) }
}
