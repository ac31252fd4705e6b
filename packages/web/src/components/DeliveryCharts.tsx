import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { queries } from '../api/queries.ts'
import { ErrorBox } from '../ui/errors.tsx'
import { Chart, RANGES, RangeChoice, SERIES_REFRESH_MS } from './Chart.tsx'

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0)

/** Attempts and latency over time, from the destination's series endpoint. */
export function DeliveryCharts({ destinationId }: { destinationId: string }) {
  const [range, setRange] = useState(RANGES[0]!)
  const series = useQuery({
    ...queries.destinationSeries(destinationId, range),
    refetchInterval: SERIES_REFRESH_MS,
  })
  const points = series.data?.points ?? []
  const times = points.map((point) => Date.parse(point.at) / 1000)
  return (
    <div className="card">
      <h2>Over time</h2>
      <RangeChoice name={`range-${destinationId}`} range={range} onChange={setRange} />
      <ErrorBox error={series.error} />
      {series.data && (
        <p className="muted" role="status">
          {sum(points.map((p) => p.succeeded)).toLocaleString()} attempts succeeded and{' '}
          {sum(points.map((p) => p.failed)).toLocaleString()} failed in the {range.label.toLowerCase()}.
        </p>
      )}
      <div className="charts">
        <Chart
          title="Attempts"
          // Failed first, so that Succeeded is drawn over it: a flat zero of failures stays under the successes.
          data={[times, points.map((p) => p.failed), points.map((p) => p.succeeded)]}
          series={[
            { label: 'Failed', stroke: '#cf222e' },
            { label: 'Succeeded', stroke: '#1a7f37' },
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
