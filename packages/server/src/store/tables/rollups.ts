/**
 * The per-minute figures: `delivery_rollups` (attempts rolled up per destination and minute, up to
 * where `rollup_progress` says) and `source_rollups` (calls stored per source and minute, written by
 * ingest). The SQL that aggregates attempts into minutes is written once, here, for both backends (the
 * same text runs on SQLite and PostgreSQL; only the parameter markers differ). Which minutes are ready
 * to roll up is the series rule's (domain/series.ts, `rollUpWindow`).
 */
import { LATENCY_BUCKET_BOUNDS_MS, MINUTE_MS, type SourceMinute } from '../../domain/series.ts'
import type { Awaitable } from './sql-types.ts'

/** One destination's figures for one minute. */
export interface MinuteRow {
  minute: number
  succeeded: number
  failed: number
  /** Attempt counts per latency bucket (see LATENCY_BUCKET_BOUNDS_MS). */
  buckets: number[]
}

export interface RollupsSql {
  /** Up to where attempts are rolled up (exclusive, a minute boundary); null before the first roll-up. */
  through(): Awaitable<number | null>
  /** When the oldest stored attempt was made; null when there is none. */
  earliestAttempt(): Awaitable<number | null>
  /**
   * Rolls attempts of `[from, to)` up (rows already there are kept) and moves the progress to `to`, in
   * one transaction. Returns the rows written.
   */
  rollUp(from: number, to: number): Awaitable<number>
  /** Rolled-up minutes of one destination in `[from, to)`. */
  rows(destinationId: string, from: number, to: number): Awaitable<MinuteRow[]>
  /** The same figures computed from the attempts themselves (for minutes not rolled up yet). */
  live(destinationId: string, from: number, to: number): Awaitable<MinuteRow[]>
  /** source_rollups of one source in `[from, to)`, a row per minute, oldest first. */
  sourceMinutes(sourceId: string, from: number, to: number): Awaitable<SourceMinute[]>
}

export const BUCKET_COLUMNS = LATENCY_BUCKET_BOUNDS_MS.map((_, index) => `b${index}`)

/**
 * When the oldest stored attempt was made, batch attempts included. Attempts are indexed by destination
 * and time, so their oldest is read destination by destination (a destination's attempts go with it).
 */
export const EARLIEST_ATTEMPT_SQL = `SELECT MIN(at) AS at FROM (
  SELECT (SELECT a.attempted_at FROM attempts a WHERE a.destination_id = d.id ORDER BY a.attempted_at LIMIT 1) AS at
    FROM destinations d
  UNION ALL SELECT MIN(attempted_at) FROM batch_attempts) AS earliest`

/**
 * Attempts of `[from, to)` per destination and minute, as delivery_rollups rows; a batch's attempt
 * (one request for all its messages) counts once. `marker(n)` writes the n-th (1-based) parameter,
 * which may appear more than once: from, to, then (when `oneDestination`) the destination id.
 */
export function attemptMinutesSql(marker: (n: number) => string, oneDestination: boolean): string {
  const buckets = LATENCY_BUCKET_BOUNDS_MS.map((bound, index) => {
    const lower = index === 0 ? null : LATENCY_BUCKET_BOUNDS_MS[index - 1]!
    const conditions = [
      ...(lower === null ? [] : [`latency_ms >= ${lower}`]),
      ...(Number.isFinite(bound) ? [`latency_ms < ${bound}`] : []),
    ]
    return `SUM(CASE WHEN ${conditions.join(' AND ')} THEN 1 ELSE 0 END) AS b${index}`
  })
  return `SELECT destination_id, attempted_at / ${MINUTE_MS} * ${MINUTE_MS} AS minute,
      SUM(CASE WHEN status_code BETWEEN 200 AND 299 THEN 1 ELSE 0 END) AS succeeded,
      SUM(CASE WHEN status_code BETWEEN 200 AND 299 THEN 0 ELSE 1 END) AS failed,
      ${buckets.join(',\n      ')}
    FROM (${attemptsOf(marker, oneDestination)}
      UNION ALL SELECT destination_id, attempted_at, status_code, latency_ms FROM batch_attempts
      WHERE attempted_at >= ${marker(1)} AND attempted_at < ${marker(2)}${oneDestination ? ` AND destination_id = ${marker(3)}` : ''}) AS window_attempts
    GROUP BY destination_id, attempted_at / ${MINUTE_MS} * ${MINUTE_MS}`
}

/**
 * The attempts of `[from, to)`, of one destination or of all. Their index is by destination and time: for
 * all destinations it is walked destination by destination (a destination's attempts go with it).
 */
function attemptsOf(marker: (n: number) => string, oneDestination: boolean): string {
  const window = `a.attempted_at >= ${marker(1)} AND a.attempted_at < ${marker(2)}`
  return oneDestination
    ? `SELECT a.destination_id, a.attempted_at, a.status_code, a.latency_ms FROM attempts a
      WHERE a.destination_id = ${marker(3)} AND ${window}`
    : `SELECT a.destination_id, a.attempted_at, a.status_code, a.latency_ms FROM destinations d
      CROSS JOIN attempts a WHERE a.destination_id = d.id AND ${window}`
}

/** A delivery_rollups row (or a row of attemptMinutesSql) as a MinuteRow. */
export function toMinuteRow(row: Record<string, unknown>): MinuteRow {
  return {
    minute: Number(row.minute),
    succeeded: Number(row.succeeded),
    failed: Number(row.failed),
    buckets: BUCKET_COLUMNS.map((column) => Number(row[column])),
  }
}

/**
 * What one ingest commit adds to source_rollups: the stored calls counted per source and minute of
 * receipt, in memory, so that the commit writes one row per source and minute rather than one per call.
 */
export function sourceMinuteCounts(
  messages: readonly { sourceId: string; receivedAt: number }[],
  stored: readonly boolean[],
): { sourceId: string; minute: number; accepted: number }[] {
  const rows: { sourceId: string; minute: number; accepted: number }[] = []
  // Per source, its rows by minute: a commit group spans one minute or two, so these stay tiny.
  const bySource = new Map<string, Map<number, { sourceId: string; minute: number; accepted: number }>>()
  for (let index = 0; index < messages.length; index++) {
    if (!stored[index]) continue
    const { sourceId, receivedAt } = messages[index]!
    const minute = receivedAt - (receivedAt % MINUTE_MS)
    let minutes = bySource.get(sourceId)
    if (!minutes) {
      minutes = new Map()
      bySource.set(sourceId, minutes)
    }
    const row = minutes.get(minute)
    if (row) row.accepted++
    else {
      const added = { sourceId, minute, accepted: 1 }
      minutes.set(minute, added)
      rows.push(added)
    }
  }
  return rows
}
