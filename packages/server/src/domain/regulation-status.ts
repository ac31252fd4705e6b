/**
 * How far a deletion request has come, from its erasure and the states of its `delete` notifications.
 * One policy for the request as a whole and for each destination's share of it.
 */
import type { RegulationStatus } from './regulations.ts'

export interface NotificationCounts {
  /** Not final yet (pending or retrying). */
  open: number
  delivered: number
  failed: number
}

/**
 * RUNNING while anything is left to do; then FINISHED when every notification was delivered,
 * FAILED when there were some and none was, PARTIAL_SUCCESS otherwise.
 */
export function regulationStatus(counts: NotificationCounts, erasurePending: boolean): RegulationStatus {
  if (erasurePending || counts.open > 0) return 'RUNNING'
  if (counts.failed === 0) return 'FINISHED'
  return counts.delivered === 0 ? 'FAILED' : 'PARTIAL_SUCCESS'
}
