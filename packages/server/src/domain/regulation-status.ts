/**
 * How far a deletion request has come, from its erasure and the states of its `delete` notifications.
 * One policy for the request as a whole and for each destination's share of it.
 */
import type { RegulationDestination, RegulationStatus } from './regulations.ts'

export interface NotificationCounts {
  /** Not final yet (pending or retrying). */
  open: number
  delivered: number
  failed: number
}

/** How many of a request's `delete` notifications to one destination are in one delivery status. */
export interface DestinationNotifications {
  destinationId: string
  /** A delivery status: `delivered` and `failed` are final, anything else is still open. */
  status: string
  count: number
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

/** Each destination's share of a request, by destination id, from its notifications' counts. */
export function regulationDestinations(
  notifications: readonly DestinationNotifications[],
): RegulationDestination[] {
  return [...countsByDestination(notifications)]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([destinationId, counts]) => ({
      destinationId,
      status: regulationStatus(counts, false),
      delivered: counts.delivered,
      failed: counts.failed,
    }))
}

/** The request's status now, and each destination's share of it. */
export function regulationProgress(
  notifications: readonly DestinationNotifications[],
  erasurePending: boolean,
): { status: RegulationStatus; destinations: RegulationDestination[] } {
  const total: NotificationCounts = { open: 0, delivered: 0, failed: 0 }
  for (const counts of countsByDestination(notifications).values()) {
    total.open += counts.open
    total.delivered += counts.delivered
    total.failed += counts.failed
  }
  return {
    status: regulationStatus(total, erasurePending),
    destinations: regulationDestinations(notifications),
  }
}

function countsByDestination(
  notifications: readonly DestinationNotifications[],
): Map<string, NotificationCounts> {
  const byDestination = new Map<string, NotificationCounts>()
  for (const { destinationId, status, count } of notifications) {
    const counts = byDestination.get(destinationId) ?? { open: 0, delivered: 0, failed: 0 }
    if (status === 'delivered') counts.delivered += count
    else if (status === 'failed') counts.failed += count
    else counts.open += count
    byDestination.set(destinationId, counts)
  }
  return byDestination
}
