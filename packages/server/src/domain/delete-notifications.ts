/**
 * Who a deletion request tells, and with what: one `delete` notification per user per Webhooks
 * destination connected to at least one source the user sent calls to. The store works the plan out
 * inside the transaction that records the request (store/tables/regulations.ts), so that the request
 * and its notifications are committed together.
 */

/** A user and a source it sent calls to (as userId, or as an alias's previousId). */
export interface UserSource {
  userId: string
  sourceId: string
}

/** An enabled Webhooks destination connected to a source. */
export interface NotificationTarget {
  destinationId: string
  sourceId: string
}

/** One stored `delete` notification: a message of `sourceId`, delivered to `destinationIds`. */
export interface PlannedNotification {
  userId: string
  sourceId: string
  destinationIds: string[]
  payloadJson: string
}

/**
 * Never two notifications for one user to one destination: a destination connected to several of the
 * user's sources gets one, stored as a message of the first such source (by id), so that the
 * deliveries API shows where it came from.
 */
export function planNotifications(
  affected: readonly UserSource[],
  targets: readonly NotificationTarget[],
  createdAt: number,
): PlannedNotification[] {
  const sourcesByUser = new Map<string, Set<string>>()
  for (const { userId, sourceId } of affected) {
    const sources = sourcesByUser.get(userId) ?? new Set<string>()
    sources.add(sourceId)
    sourcesByUser.set(userId, sources)
  }
  const byDestination = new Map<string, string[]>()
  for (const { destinationId, sourceId } of targets) {
    const list = byDestination.get(destinationId) ?? []
    list.push(sourceId)
    byDestination.set(destinationId, list)
  }
  for (const list of byDestination.values()) list.sort()
  const timestamp = new Date(createdAt).toISOString()
  const planned: PlannedNotification[] = []
  for (const [userId, sources] of sourcesByUser) {
    const bySource = new Map<string, string[]>()
    for (const [destinationId, connected] of byDestination) {
      const sourceId = connected.find((id) => sources.has(id))
      if (sourceId === undefined) continue
      const list = bySource.get(sourceId) ?? []
      list.push(destinationId)
      bySource.set(sourceId, list)
    }
    const payloadJson = JSON.stringify({ type: 'delete', userId, timestamp })
    for (const [sourceId, destinationIds] of bySource) {
      planned.push({ userId, sourceId, destinationIds: destinationIds.sort(), payloadJson })
    }
  }
  return planned
}

/** The messageId of a stored `delete` notification: unique, and tells which request sent it. */
export const notificationMessageId = (regulationId: string, index: number): string =>
  `${regulationId}-${index + 1}`
