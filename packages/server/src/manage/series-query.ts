/**
 * What the `…/stats/series` endpoints share: the time query parameters, read into epoch ms, and the
 * answer's frame (ISO times, `step` in seconds).
 */
import { SERIES_LIMITS } from '../domain/series.ts'
import { HttpError } from '../lib/errors.ts'
import { timestamp, wholeNumberQuery } from './common-schemas.ts'

/** ISO 8601 date (`2026-01-31`, midnight UTC) or date-time with a zone (`Z` or `±hh:mm`). */
export const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i

/** A time query parameter (`since`, `until`, `from`, `to`) as epoch ms. */
export function parseTime(raw: string, name = 'since'): number {
  const at = ISO_8601.test(raw) ? Date.parse(raw) : Number.NaN
  if (Number.isNaN(at)) {
    throw new HttpError(
      400,
      'validation_failed',
      `The query parameter "${name}" must be an ISO 8601 time with a time zone, such as 2026-01-31T12:00:00Z ` +
        `(URL-encode "+" as %2B), or a date such as 2026-01-31; got "${raw}".`,
      `/${name}`,
    )
  }
  return at
}

/** The query string of a series request. */
export const seriesQuerystring = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: { type: 'string', description: 'Start, ISO 8601 (default: an hour before `to`).' },
    to: { type: 'string', description: 'End, ISO 8601 (default: now).' },
    step: wholeNumberQuery({
      minimum: SERIES_LIMITS.minStepMs / 1000,
      maximum: SERIES_LIMITS.maxSpanMs / 1000,
      description: 'Seconds per point, a whole number of minutes (default 60). At most 1,500 points.',
    }),
  },
} as const

/** The schema of a series answer whose points are `point` (an object schema without `type`). */
export function seriesResponse<const Point extends { required: readonly string[]; properties: object }>(
  point: Point,
) {
  return {
    description: 'The points, oldest first, one per step (zeros where nothing happened).',
    type: 'object',
    required: ['from', 'to', 'step', 'points'],
    properties: {
      from: timestamp,
      to: timestamp,
      step: { type: 'integer', description: 'Seconds per point.' },
      points: { type: 'array', items: { type: 'object', ...point } },
    },
  } as const
}

export interface SeriesRange {
  from: number
  to: number
  /** In ms. */
  step: number
}

/** The range a series request asks for, with its defaults: the last hour, a point a minute. */
export function seriesRange(query: { from?: string; to?: string; step?: number }): SeriesRange {
  const to = query.to === undefined ? Date.now() : parseTime(query.to, 'to')
  const from = query.from === undefined ? to - 3_600_000 : parseTime(query.from, 'from')
  return { from, to, step: (query.step ?? 60) * 1000 }
}

/** A point as answered: `at` as an ISO time. */
type PointView<Point> = { [Key in keyof Point]: Key extends 'at' ? string : Point[Key] }

/** The answer of a series request: its points with ISO times, `from` being the first point's start. */
export function seriesAnswer<Point extends { at: number }>(
  range: SeriesRange,
  points: Point[],
): { from: string; to: string; step: number; points: PointView<Point>[] } {
  return {
    from: new Date(points[0]?.at ?? range.from).toISOString(),
    to: new Date(range.to).toISOString(),
    step: range.step / 1000,
    points: points.map((point) => ({ ...point, at: new Date(point.at).toISOString() }) as PointView<Point>),
  }
}
