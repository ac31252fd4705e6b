/**
 * A chart card's parts: the time ranges and their buttons, and the chart itself (uPlot, loaded only
 * when a chart is shown).
 */
import { useEffect, useRef, useState } from 'react'
import type uPlot from 'uplot'
import type { SeriesRange } from '../api/queries.ts'

export const RANGES: readonly SeriesRange[] = [
  { label: 'Last hour', spanMs: 3_600_000, stepSeconds: 60 },
  { label: 'Last day', spanMs: 86_400_000, stepSeconds: 900 },
  { label: 'Last week', spanMs: 7 * 86_400_000, stepSeconds: 3_600 },
]

/** Charts fetch their points again this often. */
export const SERIES_REFRESH_MS = 30_000

/** The time range buttons of a chart card. */
export function RangeChoice({
  name,
  range,
  onChange,
}: {
  name: string
  range: SeriesRange
  onChange: (range: SeriesRange) => void
}) {
  return (
    <fieldset className="ranges">
      <legend className="visually-hidden">Time range</legend>
      {RANGES.map((option) => (
        <label key={option.label} className="check">
          <input type="radio" name={name} checked={option === range} onChange={() => onChange(option)} />{' '}
          {option.label}
        </label>
      ))}
    </fieldset>
  )
}

/**
 * The value axis: from 0 (counts and latencies are never negative, and a flat line of 1 ms must not
 * read as a range of 6–10 ms) to a little above the largest value, at least 1.
 */
export function valueRange(max: number | null): [number, number] {
  const top = max === null || !Number.isFinite(max) || max <= 0 ? 1 : max * 1.15
  return [0, top]
}

/** With this many points or fewer, each point is drawn as a dot: a single point has no line to show it. */
const DOTS_UP_TO = 12

/** A line chart of `data` (times first, then one row per series, drawn in order: the last on top). */
export function Chart(props: {
  title: string
  data: (number | null)[][]
  series: { label: string; stroke: string }[]
}) {
  const container = useRef<HTMLDivElement>(null)
  const plot = useRef<uPlot | null>(null)
  const [failure, setFailure] = useState<string | null>(null)
  const { title, data, series } = props
  const key = JSON.stringify(data)
  // biome-ignore lint/correctness/useExhaustiveDependencies: redrawn when the data (its JSON) changes.
  useEffect(() => {
    let cancelled = false
    void Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(
      ([{ default: UPlot }]) => {
        if (cancelled || !container.current) return
        plot.current?.destroy()
        const values = data.slice(1).flat()
        const present = values.filter((value): value is number => value !== null)
        const dots =
          Math.max(...data.slice(1).map((row) => row.filter((v) => v !== null).length), 0) <= DOTS_UP_TO
        plot.current = new UPlot(
          {
            width: Math.max(260, container.current.clientWidth),
            height: 200,
            scales: { y: { range: () => valueRange(present.length ? Math.max(...present) : null) } },
            series: [
              {},
              ...series.map((each) => ({
                label: each.label,
                stroke: each.stroke,
                width: 2,
                spanGaps: true,
                points: { show: dots, size: 7, fill: each.stroke },
              })),
            ],
            axes: [{}, { size: 50 }],
          },
          data as uPlot.AlignedData,
          container.current,
        )
      },
      (error: Error) => setFailure(`The chart could not be drawn: ${error.message}`),
    )
    return () => {
      cancelled = true
    }
  }, [key])
  useEffect(() => () => plot.current?.destroy(), [])
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <div ref={container} role="img" aria-label={`${title} chart`} />
      {failure && <p className="muted">{failure}</p>}
    </figure>
  )
}
