import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { queries } from '../api/queries.ts'
import { ErrorBox } from '../ui/errors.tsx'
import { Chart, RANGES, RangeChoice, SERIES_REFRESH_MS } from './Chart.tsx'

/** The calls a source stored over time (duplicates left out), from its series endpoint. */
export function SourceChart({ sourceId }: { sourceId: string }) {
  const [range, setRange] = useState(RANGES[0]!)
  const series = useQuery({ ...queries.sourceSeries(sourceId, range), refetchInterval: SERIES_REFRESH_MS })
  const points = series.data?.points ?? []
  const total = points.reduce((sum, point) => sum + point.accepted, 0)
  return (
    <div className="card">
      <h2>Calls over time</h2>
      <RangeChoice name={`range-${sourceId}`} range={range} onChange={setRange} />
      <ErrorBox error={series.error} />
      {series.data && (
        <p className="muted" role="status">
          {total.toLocaleString()} {total === 1 ? 'call' : 'calls'} stored in the {range.label.toLowerCase()}.
        </p>
      )}
      <div className="charts">
        <Chart
          title="Calls stored"
          data={[points.map((point) => Date.parse(point.at) / 1000), points.map((point) => point.accepted)]}
          series={[{ label: 'Stored', stroke: '#0b5cad' }]}
          rest="total"
          counts
          empty={`No calls stored in the ${range.label.toLowerCase()}`}
        />
      </div>
    </div>
  )
}
