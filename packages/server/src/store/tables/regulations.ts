/**
 * The `regulations` table, with `suppressions` (the suppressions in force) and
 * `regulation_deliveries` (which deliveries are a deletion request's `delete` notifications).
 */
import { type PlannedNotification, planNotifications } from '../../domain/delete-notifications.ts'
import type { ErasureScope, UnfinishedRegulation } from '../../domain/privacy-store.ts'
import { type DestinationNotifications, regulationDestinations } from '../../domain/regulation-status.ts'
import {
  type Regulation,
  type RegulationStatus,
  type RegulationType,
  SUBJECT_TYPE,
  type Suppression,
} from '../../domain/regulations.ts'
import { gateOfRow, passGate } from '../../route/gates.ts'
import { type GatedCall, type GatedCountRow, sumGatedCalls } from './destinations.ts'
import type { Awaitable, Flag } from './sql-types.ts'

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
export interface AffectedSourceRow {
  user_id: string
  source_id: string
}

/** An enabled Webhooks destination connected to a source, with its settings (their subscription and filters judge the notification). */
export interface NotificationTargetRow {
  destination_id: string
  source_id: string
  routing: string | null
  updated_at: number | string
}

/** What creating a regulation does besides storing its row (the core decides it from the type). */
export interface RegulationWork {
  userIds: string[]
  /** Null for every source. */
  sourceIds: string[] | null
  /** Suppress the users (in each of `sourceIds`, or everywhere). */
  suppress: boolean
  /** Lift the users' suppressions (in each of `sourceIds`, or all of them). */
  unsuppress: boolean
  /** Cancel the unsent deliveries of the users' messages and queue their `delete` notifications. */
  notify: boolean
}

export interface RegulationsSql {
  /**
   * The row and its `work`, in one transaction: a crash after it returns loses nothing. Notifications
   * are planned with `planDeleteNotifications`. Returns how many deliveries it queued.
   */
  create(row: RegulationRow, work: RegulationWork): Awaitable<number>
  get(id: string): Awaitable<RegulationRow | undefined>
  /** Newest first. */
  list(status: string | undefined, limit: number): Awaitable<RegulationRow[]>
  /** Delivery-status counts of these regulations' notifications (at least one id), by destination. */
  notificationCounts(regulationIds: string[]): Awaitable<NotificationCountRow[]>
  suppressions(): Awaitable<SuppressionRow[]>
  /** How many regulations there are and the newest one's creation time (regulations are never deleted). */
  version(): Awaitable<{ n: number; newest: number | null }>
  /** Deleting regulations created after `since`, or with erasure pending. */
  recentErasures(since: number): Awaitable<RegulationRow[]>
  /**
   * One transaction: takes the oldest regulation with erasure pending (PostgreSQL: SKIP LOCKED), deletes
   * up to `limit` of its users' messages received up to its creation in its sources, with their
   * deliveries and attempts, adds them to its count, and clears `erasure_pending` when fewer than
   * `limit` were left. Null when no regulation has erasure pending (or all are being erased elsewhere,
   * or are in `skip`). A batch that fails once its regulation is chosen throws `ErasureFailed`.
   */
  eraseNext(
    limit: number,
    skip: readonly string[],
  ): Awaitable<{ id: string; erased: number; done: boolean } | null>
  /** Deleting regulations whose messages are erased and whose profiles are not yet. */
  profileErasuresDue(): Awaitable<RegulationRow[]>
  /** Records the profiles erased (the largest count wins, should two processes race). */
  recordErasedProfiles(id: string, count: number): Awaitable<void>
  /** Regulations not finished, oldest first. */
  unfinished(): Awaitable<RegulationRow[]>
  /** A new status; `outcome` and `finishedAt` only when it is final. */
  setStatus(id: string, status: string, finishedAt: number | null, outcome: string | null): Awaitable<void>
}

/** The domain's plan of a deletion's `delete` notifications (delete-notifications.ts), from rows. */
export function planDeleteNotifications(
  affected: readonly AffectedSourceRow[],
  targets: readonly NotificationTargetRow[],
  createdAt: number,
): { planned: PlannedNotification[]; gated: GatedCountRow[] } {
  const gates = new Map(
    targets.map((row) => [row.destination_id, gateOfRow({ id: row.destination_id, ...row })] as const),
  )
  // A destination whose subscription or filters keep a user's notification out does not get it; the
  // call is counted as any other it keeps out.
  const gated: GatedCall[] = []
  const planned = planNotifications(
    affected.map((row) => ({ userId: row.user_id, sourceId: row.source_id })),
    targets.map((row) => ({ destinationId: row.destination_id, sourceId: row.source_id })),
    createdAt,
  )
    .map((plan) => {
      const call = JSON.parse(plan.payloadJson) as Record<string, unknown>
      const destinationIds = plan.destinationIds.filter((id) => {
        const gate = gates.get(id)
        const verdict = gate == null ? 'kept' : passGate(gate, call).verdict
        if (verdict !== 'kept') gated.push({ destination_id: id, verdict })
        return verdict === 'kept'
      })
      return { ...plan, destinationIds }
    })
    .filter((plan) => plan.destinationIds.length > 0)
  return { planned, gated: sumGatedCalls(gated) }
}

const parseIds = (text: string | null): string[] | null =>
  text === null ? null : (JSON.parse(text) as string[])

function toNotifications(counts: readonly NotificationCountRow[]): DestinationNotifications[] {
  return counts.map((row) => ({
    destinationId: row.destination_id,
    status: row.status,
    count: Number(row.n),
  }))
}

/**
 * The regulation with its destinations' shares: frozen once it finished, else counted now from
 * `counts` (its own rows). Its status is the stored one, which the erasure runner keeps up to date
 * (privacy/regulation-settling.ts), so status and `finishedAt` always agree.
 */
export function toRegulation(row: RegulationRow, counts: readonly NotificationCountRow[]): Regulation {
  return {
    id: row.id,
    regulationType: row.type as RegulationType,
    subjectType: SUBJECT_TYPE,
    subjectIds: parseIds(row.subject_ids)!,
    sourceIds: parseIds(row.source_ids),
    status: row.status as RegulationStatus,
    createdAt: Number(row.created_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
    destinations:
      row.outcome !== null ? JSON.parse(row.outcome) : regulationDestinations(toNotifications(counts)),
    erased: { messages: Number(row.erased_messages), profiles: Number(row.erased_profiles ?? 0) },
  }
}

/** An unfinished regulation with its notifications counted now (`counts`: its own rows). */
export function toUnfinishedRegulation(
  row: RegulationRow,
  counts: readonly NotificationCountRow[],
): UnfinishedRegulation {
  return {
    id: row.id,
    status: row.status as RegulationStatus,
    erasurePending: Boolean(row.erasure_pending),
    notifications: toNotifications(counts),
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
