import { useQuery } from '@tanstack/react-query'
import { useEffect, useRef, useState } from 'react'
import type uPlot from 'uplot'
import { get } from '../api.ts'
import { ErrorBox } from '../ui.tsx'

interface SeriesPoint {
  at: string
  succeeded: number
  failed: number
  latencyP50Ms: number | null
  latencyP95Ms: number | null
}

export const RANGES = [
  { label: 'Last hour', spanMs: 3_600_000, stepSeconds: 60 },
  { label: 'Last day', spanMs: 86_400_000, stepSeconds: 900 },
  { label: 'Last week', spanMs: 7 * 86_400_000, stepSeconds: 3_600 },
]

export type Range = (typeof RANGES)[number]

/** A `…/stats/series` endpoint's points over `range`, refreshed every 30 s. */
export function useSeries<Point>(path: string, range: Range) {
  return useQuery({
    queryKey: ['series', path, range.label],
    queryFn: () => {
      const to = Date.now()
      const query = new URLSearchParams({
        from: new Date(to - range.spanMs).toISOString(),
        to: new Date(to).toISOString(),
        step: String(range.stepSeconds),
      })
      return get<{ points: Point[] }>(`${path}/stats/series?${query}`)
    },
    refetchInterval: 30_000,
  })
}

/** The time range buttons of a chart card. */
export function RangeChoice({
  name,
  range,
  onChange,
}: {
  name: string
  range: Range
  onChange: (range: Range) => void
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

/** Attempts and latency over time, from the series endpoint; uPlot is loaded only when a chart is shown. */
export function DeliveryCharts({ destinationId }: { destinationId: string }) {
  const [range, setRange] = useState(RANGES[0]!)
  const series = useSeries<SeriesPoint>(`/destinations/${destinationId}`, range)
  const points = series.data?.points ?? []
  const times = points.map((point) => Date.parse(point.at) / 1000)
  return (
    <div className="card">
      <h2>Over time</h2>
      <RangeChoice name={`range-${destinationId}`} range={range} onChange={setRange} />
      <ErrorBox error={series.error} />
      <div className="charts">
        <Chart
          title="Attempts"
          data={[times, points.map((p) => p.succeeded), points.map((p) => p.failed)]}
          series={[
            { label: 'Succeeded', stroke: '#1a7f37' },
            { label: 'Failed', stroke: '#cf222e' },
          ]}
        />
        <Chart
          title="Latency (ms)"
          data={[times, points.map((p) => p.latencyP50Ms), points.map((p) => p.latencyP95Ms)]}
          series={[
            { label: 'p50', stroke: '#0b5cad' },
            { label: 'p95', stroke: '#8250df' },
          ]}
        />
      </div>
    </div>
  )
}

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
        plot.current = new UPlot(
          {
            width: Math.max(260, container.current.clientWidth),
            height: 200,
            series: [
              {},
              ...series.map((each) => ({ label: each.label, stroke: each.stroke, width: 2, spanGaps: true })),
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
