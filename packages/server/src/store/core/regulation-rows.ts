/**
 * Regulations in storage, for both backends: their rows, the plan of a deletion's `delete`
 * notifications (worked out once, here, inside each backend's transaction), and row ⇄ record mapping.
 */
import { regulationStatus } from '../../domain/regulation-status.ts'
import {
  type Regulation,
  type RegulationDestination,
  type RegulationStatus,
  type RegulationType,
  SUBJECT_TYPE,
  type Suppression,
} from '../../domain/regulations.ts'
import type { ErasureScope } from '../store.ts'

type Flag = boolean | number

export interface RegulationRow {
  id: string
  type: string
  /** JSON array. */
  subject_ids: string
  /** JSON array, or null for every source. */
  source_ids: string | null
  status: string
  created_at: number
  finished_at: number | null
  erasure_pending: Flag
  erased_messages: number
  /** Profiles erased; null until a deleting regulation's profiles are erased (after its messages). */
  erased_profiles?: number | null
  /** JSON RegulationDestination[], frozen once finished. */
  outcome: string | null
}

/** How many of a regulation's notifications to one destination are in one delivery status. */
export interface NotificationCountRow {
  regulation_id: string
  destination_id: string
  status: string
  n: number
}

export interface SuppressionRow {
  user_id: string
  source_id: string
  regulation_id: string
  created_at: number
}

/** `suppressions.source_id` of a suppression in every source. */
export const EVERY_SOURCE = '*'

/** A user and a source it sent calls to (as userId, or as an alias's previousId). */
export interface AffectedSource {
  user_id: string
  source_id: string
}

/** An enabled Webhooks destination connected to a source. */
export interface NotificationTarget {
  destination_id: string
  source_id: string
}

/** One stored `delete` notification: a message of `sourceId`, delivered to `destinationIds`. */
export interface PlannedNotification {
  userId: string
  sourceId: string
  destinationIds: string[]
  payloadJson: string
}

/**
 * One `delete` per user per destination connected to at least one source the user sent calls to, never
 * two: a destination connected to several of them gets it once, stored as a message of the first such
 * source (by id) so the deliveries API shows where it came from.
 */
export function planNotifications(
  affected: readonly AffectedSource[],
  targets: readonly NotificationTarget[],
  createdAt: number,
): PlannedNotification[] {
  const sourcesByUser = new Map<string, Set<string>>()
  for (const { user_id, source_id } of affected) {
    const sources = sourcesByUser.get(user_id) ?? new Set<string>()
    sources.add(source_id)
    sourcesByUser.set(user_id, sources)
  }
  const byDestination = new Map<string, string[]>()
  for (const { destination_id, source_id } of targets) {
    const list = byDestination.get(destination_id) ?? []
    list.push(source_id)
    byDestination.set(destination_id, list)
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

const parseIds = (text: string | null): string[] | null =>
  text === null ? null : (JSON.parse(text) as string[])

/** Per destination, from the count rows of one regulation. */
function destinationsOf(counts: readonly NotificationCountRow[]): RegulationDestination[] {
  const byDestination = new Map<string, { open: number; delivered: number; failed: number }>()
  for (const row of counts) {
    const entry = byDestination.get(row.destination_id) ?? { open: 0, delivered: 0, failed: 0 }
    const n = Number(row.n)
    if (row.status === 'delivered') entry.delivered += n
    else if (row.status === 'failed') entry.failed += n
    else entry.open += n
    byDestination.set(row.destination_id, entry)
  }
  return [...byDestination]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([destinationId, entry]) => ({
      destinationId,
      status: regulationStatus(entry, false),
      delivered: entry.delivered,
      failed: entry.failed,
    }))
}

/** The regulation's status and per-destination counts now, from its row and notification counts. */
export function regulationProgress(
  row: RegulationRow,
  counts: readonly NotificationCountRow[],
): { status: RegulationStatus; destinations: RegulationDestination[] } {
  if (row.outcome !== null) {
    return { status: row.status as RegulationStatus, destinations: JSON.parse(row.outcome) }
  }
  const destinations = destinationsOf(counts)
  let open = 0
  for (const row of counts) if (row.status !== 'delivered' && row.status !== 'failed') open += Number(row.n)
  const delivered = destinations.reduce((sum, each) => sum + each.delivered, 0)
  const failed = destinations.reduce((sum, each) => sum + each.failed, 0)
  return { status: regulationStatus({ open, delivered, failed }, Boolean(row.erasure_pending)), destinations }
}

/**
 * The regulation with live per-destination counts. Its status is the stored one, which the erasure
 * runner keeps up to date (settleRegulations), so status and `finishedAt` always agree.
 */
export function toRegulation(row: RegulationRow, counts: readonly NotificationCountRow[]): Regulation {
  const { destinations } = regulationProgress(row, counts)
  const status = row.status as RegulationStatus
  return {
    id: row.id,
    regulationType: row.type as RegulationType,
    subjectType: SUBJECT_TYPE,
    subjectIds: parseIds(row.subject_ids)!,
    sourceIds: parseIds(row.source_ids),
    status,
    createdAt: Number(row.created_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
    destinations,
    erased: { messages: Number(row.erased_messages), profiles: Number(row.erased_profiles ?? 0) },
  }
}

export function toSuppression(row: SuppressionRow): Suppression {
  return {
    userId: row.user_id,
    sourceId: row.source_id === EVERY_SOURCE ? null : row.source_id,
    regulationId: row.regulation_id,
    createdAt: Number(row.created_at),
  }
}

export function toErasureScope(row: RegulationRow): ErasureScope {
  return {
    regulationId: row.id,
    userIds: parseIds(row.subject_ids)!,
    sourceIds: parseIds(row.source_ids),
    createdAt: Number(row.created_at),
  }
}
