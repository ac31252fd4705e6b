/**
 * A chart card's parts: the time ranges and their buttons, and the chart itself (uPlot, loaded only
 * when a chart is shown).
 */
import { useEffect, useRef, useState } from 'react'
import type uPlot from 'uplot'
import type { SeriesRange } from '../api/queries.ts'
import { showDots, valueRange } from '../model/chart-scale.ts'

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

/** A line chart of `data` (times first, then one row per series, drawn in order: the last on top). */
export function Chart(props: {
  title: string
  data: (number | null)[][]
  /** `fill` shades the area under a line; `dash` draws it dashed (e.g. `[6, 4]`). */
  series: { label: string; stroke: string; fill?: string; dash?: number[] }[]
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
        const rows = data.slice(1)
        const dots = showDots(rows)
        plot.current = new UPlot(
          {
            width: Math.max(260, container.current.clientWidth),
            height: 200,
            scales: { y: { range: () => valueRange(rows.flat()) } },
            series: [
              {},
              ...series.map((each) => ({
                label: each.label,
                stroke: each.stroke,
                width: 2,
                spanGaps: true,
                points: { show: dots, size: 7, fill: each.stroke },
                ...(each.fill ? { fill: each.fill } : {}),
                ...(each.dash ? { dash: each.dash } : {}),
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
