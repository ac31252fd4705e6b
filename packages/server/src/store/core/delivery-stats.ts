import { type DeliveryStats, NO_DELIVERIES_YET } from '../../domain/deliveries.ts'
import type { StateCountRow } from './rows.ts'

/** Counts per state (dead letters are failed ones too) and latency percentiles of recent attempts. */
export function summarizeDeliveries(counts: StateCountRow[], latencies: number[]): DeliveryStats {
  const stats: DeliveryStats = { ...NO_DELIVERIES_YET }
  for (const row of counts) {
    stats[row.status] += row.n
    if (row.dead_lettered) stats.deadLettered += row.n
  }
  if (latencies.length > 0) {
    const sorted = latencies.toSorted((a, b) => a - b)
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
    stats.latencyP50Ms = at(0.5)
    stats.latencyP95Ms = at(0.95)
  }
  return stats
}
