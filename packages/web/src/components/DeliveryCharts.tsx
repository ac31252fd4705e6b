import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { queries } from '../api/queries.ts'
import { ErrorBox } from '../ui/errors.tsx'
import { Fold } from '../ui/fold.tsx'
import { Chart, RANGES, RangeChoice, SERIES_REFRESH_MS } from './Chart.tsx'

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0)
const plural = (count: number, noun: string) => `${count.toLocaleString()} ${noun}${count === 1 ? '' : 's'}`

/** Attempts and latency over time, from the destination's series endpoint. */
export function DeliveryCharts({ destinationId }: { destinationId: string }) {
  const [range, setRange] = useState(RANGES[0]!)
  const series = useQuery({
    ...queries.destinationSeries(destinationId, range),
    refetchInterval: SERIES_REFRESH_MS,
  })
  const points = series.data?.points ?? []
  const times = points.map((point) => Date.parse(point.at) / 1000)
  const succeeded = sum(points.map((p) => p.succeeded))
  const failed = sum(points.map((p) => p.failed))
  const when = range.label.toLowerCase()
  return (
    <Fold
      title="Over time"
      summary={
        series.data
          ? `${succeeded.toLocaleString()} succeeded, ${failed.toLocaleString()} failed (${when})`
          : undefined
      }
    >
      <RangeChoice name={`range-${destinationId}`} range={range} onChange={setRange} />
      <ErrorBox error={series.error} />
      {series.data && (
        <p className="muted" role="status">
          {plural(succeeded, 'attempt')} succeeded and {failed.toLocaleString()} failed in the {when}.
        </p>
      )}
      <div className="charts">
        <Chart
          title="Attempts"
          // Successes as a shaded area, failures as a dashed line over it: both stay visible where they
          // are equal, and no failures is a dashed line on the zero of the axis.
          data={[times, points.map((p) => p.succeeded), points.map((p) => p.failed)]}
          series={[
            { label: 'Succeeded', stroke: '#1a7f37', fill: 'rgba(26, 127, 55, 0.12)' },
            { label: 'Failed', stroke: '#cf222e', dash: [6, 4] },
          ]}
          rest="total"
          counts
          empty={`No attempts in the ${when}`}
        />
        <Chart
          title="Latency"
          data={[times, points.map((p) => p.latencyP50Ms), points.map((p) => p.latencyP95Ms)]}
          series={[
            { label: 'p50', stroke: '#0b5cad' },
            { label: 'p95', stroke: '#8250df' },
          ]}
          rest="latest"
          format={(ms) => `${ms.toLocaleString()} ms`}
          empty={`No latency to show: no attempts in the ${when}`}
        />
      </div>
    </Fold>
  )
}
