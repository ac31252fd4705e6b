/**
 * How the charts scale and mark their data, apart from the drawing (uPlot) so that it is unit-tested
 * under Node (packages/web/test).
 */

/**
 * The value axis: from 0 (counts and latencies are never negative, and a flat line of 1 ms must not
 * read as a range of 6–10 ms) to a little above the largest value, at least 1.
 */
export function valueRange(values: readonly (number | null)[]): [number, number] {
  let max = 0
  for (const value of values) if (value !== null && Number.isFinite(value) && value > max) max = value
  return [0, max <= 0 ? 1 : max * 1.15]
}

/** With this many points or fewer in a series, each point is drawn as a dot. */
export const DOTS_UP_TO = 12

/** Whether to draw dots: a lone point (a minute with data among empty ones) has no line to show it. */
export function showDots(rows: readonly (readonly (number | null)[])[]): boolean {
  return rows.every((row) => row.filter((value) => value !== null).length <= DOTS_UP_TO)
}

/**
 * The points of a long series that a line alone would hide: a value (not empty, not 0) whose
 * neighbours are empty or 0, e.g. the one minute with attempts in an hour of zeros, drawn as a spike
 * against the axis's edge. Each gets a dot.
 */
export function lonePoints(row: readonly (number | null)[]): number[] {
  const empty = (value: number | null | undefined) => value === null || value === undefined || value === 0
  const lone: number[] = []
  row.forEach((value, index) => {
    if (!empty(value) && empty(row[index - 1]) && empty(row[index + 1])) lone.push(index)
  })
  return lone
}
