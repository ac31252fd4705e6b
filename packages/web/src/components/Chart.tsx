/**
 * A chart card's parts: the time ranges and their buttons, and the chart itself (uPlot, loaded only
 * when a chart is shown).
 */
import { useEffect, useRef, useState } from 'react'
import type uPlot from 'uplot'
import type { SeriesRange } from '../api/queries.ts'
import { ensureIntlLanguage } from '../model/browser-language.ts'
import { lonePoints, showDots, valueRange } from '../model/chart-scale.ts'

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

/** One line of a chart. `fill` shades the area under it; `dash` draws it dashed (e.g. `[6, 4]`). */
export interface ChartSeries {
  label: string
  stroke: string
  fill?: string
  dash?: number[]
}

/** Steps of the value axis for counts: whole numbers only (never "0.5 attempts"). */
const COUNT_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000]

/** A point's time, as the readout says it: with the day when the range is longer than a day. */
function pointTime(seconds: number, spanSeconds: number): string {
  return new Date(seconds * 1000).toLocaleString(
    undefined,
    spanSeconds > 86_400
      ? { weekday: 'short', hour: '2-digit', minute: '2-digit' }
      : { hour: '2-digit', minute: '2-digit' },
  )
}

/**
 * A line chart of `data` (times first, then one row per series, drawn in order: the last on top), with
 * its own legend: each line's marker, name and value — the hovered point's, else `rest` (the range's
 * total, or the latest value). uPlot's legend ("Time: --" and a "--" per line until hovered) is off.
 * Without data in the range, `empty` says so over the axes.
 */
export function Chart(props: {
  title: string
  data: (number | null)[][]
  series: ChartSeries[]
  /** What the legend shows while nothing is hovered: each line's sum, or its latest value. */
  rest: 'total' | 'latest'
  /** Counts: the value axis has whole steps. */
  counts?: boolean
  /** How a value reads (default: the number, e.g. "1,204"). */
  format?: (value: number) => string
  /** Said over the axes when the range has no data, e.g. "No attempts in the last hour". */
  empty: string
}) {
  const container = useRef<HTMLDivElement>(null)
  const plot = useRef<uPlot | null>(null)
  const [failure, setFailure] = useState<string | null>(null)
  const [hovered, setHovered] = useState<number | null>(null)
  const { title, data, series, rest, counts = false, empty } = props
  const format = props.format ?? ((value: number) => value.toLocaleString())
  const key = JSON.stringify(data)
  // biome-ignore lint/correctness/useExhaustiveDependencies: redrawn when the data (its JSON) changes.
  useEffect(() => {
    let cancelled = false
    // uPlot reads navigator.language into Intl as it loads; a POSIX tag would stop every chart.
    ensureIntlLanguage()
    void Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(
      ([{ default: UPlot }]) => {
        if (cancelled || !container.current) return
        plot.current?.destroy()
        setHovered(null)
        const rows = data.slice(1)
        const dots = showDots(rows)
        plot.current = new UPlot(
          {
            width: Math.max(260, container.current.clientWidth),
            height: 200,
            legend: { show: false },
            scales: { y: { range: () => valueRange(rows.flat()) } },
            series: [
              {},
              ...series.map((each, index) => ({
                label: each.label,
                stroke: each.stroke,
                width: 2,
                spanGaps: true,
                // Every point when there are few; else only those a line would hide.
                points: dots
                  ? { show: true, size: 7, fill: each.stroke }
                  : { show: true, size: 7, fill: each.stroke, filter: lonePoints(rows[index] ?? []) },
                ...(each.fill ? { fill: each.fill } : {}),
                ...(each.dash ? { dash: each.dash } : {}),
              })),
            ],
            axes: [
              {},
              {
                // With a format (latency), the axis says the unit too ("200 ms").
                size: props.format ? 70 : 50,
                ...(counts ? { incrs: COUNT_STEPS } : {}),
                ...(props.format ? { values: (_chart: uPlot, splits: number[]) => splits.map(format) } : {}),
              },
            ],
            hooks: { setCursor: [(chart) => setHovered(chart.cursor.idx ?? null)] },
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
  // The chart follows its card's width (a phone turned, a window resized).
  useEffect(() => {
    const element = container.current
    if (!element || typeof ResizeObserver === 'undefined') return
    const observer = new ResizeObserver(() => {
      const width = Math.max(260, element.clientWidth)
      if (plot.current && plot.current.width !== width) plot.current.setSize({ width, height: 200 })
    })
    observer.observe(element)
    return () => observer.disconnect()
  }, [])
  useEffect(() => () => plot.current?.destroy(), [])
  const times = data[0] ?? []
  const rows = data.slice(1)
  const hasData = rows.some((row) => row.some((value) => value !== null && value !== 0))
  const span = times.length > 1 ? (times.at(-1) ?? 0) - (times[0] ?? 0) : 0
  const hoveredTime = hovered === null ? undefined : times[hovered]
  const shownValue = (row: (number | null)[]): number | null => {
    if (hovered !== null) return row[hovered] ?? null
    if (rest === 'total') return row.reduce<number>((sum, value) => sum + (value ?? 0), 0)
    return row.findLast((value) => value !== null) ?? null
  }
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      {hasData && (
        <div className="chart-legend">
          <span className="chart-when">
            {hoveredTime !== undefined && hoveredTime !== null
              ? pointTime(hoveredTime, span)
              : rest === 'total'
                ? 'Total'
                : 'Latest'}
          </span>
          {series.map((each, index) => {
            const value = shownValue(rows[index] ?? [])
            return (
              <span key={each.label} className="chart-key">
                <span
                  className={`chart-marker${each.dash ? ' dashed' : ''}`}
                  style={{ borderColor: each.stroke, background: each.fill ?? 'transparent' }}
                  aria-hidden="true"
                />
                {each.label} <strong className="chart-value">{value === null ? '—' : format(value)}</strong>
              </span>
            )
          })}
        </div>
      )}
      <div className="chart-plot">
        <div ref={container} role="img" aria-label={`${title} chart`} />
        {!hasData && times.length > 0 && <p className="chart-empty">{empty}</p>}
      </div>
      {failure && <p className="muted">{failure}</p>}
    </figure>
  )
}
