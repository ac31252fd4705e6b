import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { queries } from '../api/queries.ts'
import { ErrorBox } from '../ui/errors.tsx'
import { Chart, RANGES, RangeChoice, SERIES_REFRESH_MS } from './Chart.tsx'

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
