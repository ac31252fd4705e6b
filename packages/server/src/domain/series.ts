/**
 * Delivery figures over time, for charts: per step, how many attempts succeeded (a 2xx answer) and
 * failed, and the p50 and p95 request latency. Figures come per minute from the store (rolled up in
 * advance, `rollUpWindow` saying which minutes are ready, so a week is ~10,000 rows at most) and are
 * summed into steps here. Latency percentiles are estimated from a fixed histogram, interpolated inside
 * the bucket the percentile falls in.
 */
import { ValidationError } from './errors.ts'

/** Upper bounds of the latency histogram buckets, in ms; the last one is open-ended. */
export const LATENCY_BUCKET_BOUNDS_MS = [
  10,
  25,
  50,
  100,
  250,
  500,
  1_000,
  2_500,
  5_000,
  10_000,
  Infinity,
] as const

export const MINUTE_MS = 60_000

/** The start of the minute `at` falls in. */
export function floorMinute(at: number): number {
  return Math.floor(at / MINUTE_MS) * MINUTE_MS
}

/** A minute is rolled up this long after it ended: attempts are recorded when their request finishes. */
export const ROLLUP_SETTLE_MS = 2 * 60_000
/** One roll-up run covers at most this much time, so that catching up after a long pause stays bounded. */
export const ROLLUP_MAX_SPAN_MS = 24 * 3_600_000

/**
 * The minutes a roll-up at `now` covers, `[from, to)`: from where the last one stopped (or, before the
 * first, the minute of the oldest attempt) up to the last settled minute, at most ROLLUP_MAX_SPAN_MS.
 * Null when nothing is ready. `resumeAt`: where the last roll-up stopped, else the oldest attempt's
 * time, else null (no attempt at all).
 */
export function rollUpWindow(now: number, resumeAt: number | null): { from: number; to: number } | null {
  const end = floorMinute(now - ROLLUP_SETTLE_MS)
  const from = floorMinute(resumeAt ?? end)
  if (from >= end) return null
  return { from, to: Math.min(end, from + ROLLUP_MAX_SPAN_MS) }
}

/** The longest span one series covers, and the most points it has. */
export const SERIES_LIMITS = { maxSpanMs: 31 * 86_400_000, maxPoints: 1_500, minStepMs: 60_000 } as const

export interface SeriesPoint {
  /** Start of the step, epoch ms. */
  at: number
  succeeded: number
  failed: number
  latencyP50Ms: number | null
  latencyP95Ms: number | null
}

export interface MinuteFigures {
  minute: number
  succeeded: number
  failed: number
  buckets: number[]
}

/** Checks a series request; `step` must be whole minutes and the series at most SERIES_LIMITS.maxPoints long. */
export function checkSeriesRange(from: number, to: number, step: number): void {
  if (!(to > from)) throw new ValidationError('/to', '"to" must be later than "from".')
  if (to - from > SERIES_LIMITS.maxSpanMs) {
    throw new ValidationError('/from', 'A series covers at most 31 days; ask for a shorter range.')
  }
  if (!Number.isInteger(step) || step < SERIES_LIMITS.minStepMs || step % SERIES_LIMITS.minStepMs !== 0) {
    throw new ValidationError('/step', '"step" must be a whole number of minutes, in seconds: 60, 300, 3600…')
  }
  if ((to - from) / step > SERIES_LIMITS.maxPoints) {
    throw new ValidationError(
      '/step',
      `That range at this step has more than ${SERIES_LIMITS.maxPoints} points; use a larger step.`,
    )
  }
}

/** Sums minutes into steps starting at `from` (the last one may be partial); steps without figures are zeros. */
export function toSeries(minutes: MinuteFigures[], from: number, to: number, step: number): SeriesPoint[] {
  const count = Math.ceil((to - from) / step)
  const steps = Array.from({ length: count }, () => ({
    succeeded: 0,
    failed: 0,
    buckets: new Array<number>(LATENCY_BUCKET_BOUNDS_MS.length).fill(0),
  }))
  for (const minute of minutes) {
    const index = Math.floor((minute.minute - from) / step)
    const target = steps[index]
    if (!target) continue
    target.succeeded += minute.succeeded
    target.failed += minute.failed
    minute.buckets.forEach((value, bucket) => {
      target.buckets[bucket]! += value
    })
  }
  return steps.map((figures, index) => ({
    at: from + index * step,
    succeeded: figures.succeeded,
    failed: figures.failed,
    latencyP50Ms: percentile(figures.buckets, 0.5),
    latencyP95Ms: percentile(figures.buckets, 0.95),
  }))
}

/** The q-th quantile of a histogram, interpolated linearly within its bucket; null when it is empty. */
export function percentile(buckets: number[], q: number): number | null {
  const total = buckets.reduce((sum, value) => sum + value, 0)
  if (total === 0) return null
  const rank = q * total
  let seen = 0
  for (let index = 0; index < buckets.length; index++) {
    const inBucket = buckets[index]!
    if (inBucket > 0 && seen + inBucket >= rank) {
      const lower = index === 0 ? 0 : LATENCY_BUCKET_BOUNDS_MS[index - 1]!
      const upper = LATENCY_BUCKET_BOUNDS_MS[index]!
      // The open-ended last bucket has no upper bound to interpolate to: its lower bound is reported.
      if (!Number.isFinite(upper)) return lower
      return Math.round(lower + ((rank - seen) / inBucket) * (upper - lower))
    }
    seen += inBucket
  }
  return null
}

/** Calls a source stored in one minute (by the minute they were received). */
export interface SourceMinute {
  minute: number
  accepted: number
}

export interface SourceSeriesPoint {
  /** Start of the step, epoch ms. */
  at: number
  /** Calls stored (accepted, not duplicates) in the step. */
  accepted: number
}

/** Sums a source's minutes into steps starting at `from` (the last one may be partial); quiet steps are zeros. */
export function toSourceSeries(
  minutes: SourceMinute[],
  from: number,
  to: number,
  step: number,
): SourceSeriesPoint[] {
  const points = Array.from({ length: Math.ceil((to - from) / step) }, (_, index) => ({
    at: from + index * step,
    accepted: 0,
  }))
  for (const { minute, accepted } of minutes) {
    const point = points[Math.floor((minute - from) / step)]
    if (point) point.accepted += accepted
  }
  return points
}
