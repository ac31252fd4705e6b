/**
 * The `deliveries` table: one row per message per destination it goes to, with its state. Claiming
 * due deliveries and recording outcomes are its hot statements.
 */
import {
  type Delivery,
  type DeliveryAttempt,
  type DeliveryStats,
  type DeliveryStatus,
  isFinal,
  NO_DELIVERIES_YET,
  type ReplayableStatus,
} from '../../domain/deliveries.ts'
import type {
  ClaimedDelivery,
  DeliveryCountFilter,
  DeliveryListFilter,
  DeliveryOutcome,
  DestinationBacklog,
  ReplayFilter,
} from '../../domain/delivery-store.ts'
import type { StoredMessageType } from '../../domain/messages.ts'
import { type AttemptRow, toAttempt } from './attempts.ts'
import type { Awaitable, Flag } from './sql-types.ts'

/** A delivery joined with its message's source_id, message_id, type and payload (for its userId and event). */
export interface DeliveryRow {
  id: number
  destination_id: string
  status: string
  dead_lettered: Flag
  attempt_count: number
  next_attempt_at: number
  first_attempt_at: number | null
  closed_urls: string | null
  created_at: number
  updated_at: number
  batch_id: number | null
  replay_id: string | null
  source_id: string
  message_id: string
  type: string
  payload: string
}

/** A delivery just leased, with its message's payload, source and receive time. */
export interface ClaimRow {
  id: number
  source_id: string
  received_at: number
  attempt_count: number
  first_attempt_at: number | null
  closed_urls: string | null
  payload: string
  /** The replay that created it; null for live deliveries. */
  replay_id: string | null
}

/** How many deliveries of a destination are in one state. */
export interface StateCountRow {
  status: DeliveryStatus
  dead_lettered: Flag
  n: number
}

/** Waiting deliveries of one destination in one state (pending or retrying). */
export interface BacklogRow {
  destination_id: string
  status: 'pending' | 'retrying'
  n: number
  oldest_due_at: number
}

/** A delivery's new state after an attempt, as its columns take it. */
export interface OutcomeRow {
  id: number
  status: DeliveryOutcome['status']
  deadLettered: boolean
  /** A final delivery keeps a due time: it is never claimed again (only pending/retrying rows are). */
  nextAttemptAt: number
  /** Kept when the delivery already has one (COALESCE in both backends' SQL). */
  firstAttemptAt: number
  /** JSON array, or null when no URL is closed. */
  closedUrls: string | null
}

export interface OutcomeRows {
  deliveries: OutcomeRow[]
  /** Every attempt of every outcome, in order. */
  attempts: { deliveryId: number; attempt: DeliveryAttempt }[]
}

/** The arguments of one `claimDeliveries`. */
export interface ClaimSpec {
  destinationId: string
  limit: number
  now: number
  leaseUntil: number
}

/**
 * The condition a bulk replay puts on a delivery (`row`, the alias it has in the statement), so that it
 * sends each call at most once: a delivery is left alone when another delivery of its call to the same
 * destination is waiting (pending or retrying), when the call was delivered by another one (for
 * `failed`), or when a newer delivery of the call has the same status (the newest one goes). Both
 * backends, same text.
 */
export function replayOnceEach(status: ReplayableStatus, row = 'deliveries'): string {
  const delivered = status === 'failed' ? "other.status = 'delivered' OR " : ''
  return `NOT EXISTS (SELECT 1 FROM deliveries other
    WHERE other.message_pk = ${row}.message_pk AND other.destination_id = ${row}.destination_id
      AND other.id <> ${row}.id
      AND (other.status IN ('pending', 'retrying') OR ${delivered}(other.status = ${row}.status AND other.id > ${row}.id)))`
}

/**
 * A batch goes out whole, with the members it was sent with: a bulk replay takes it only when every
 * member passes `replayOnceEach` (`delivery_batches` unaliased in the statement).
 */
export function replayWholeBatch(status: ReplayableStatus): string {
  return `NOT EXISTS (SELECT 1 FROM deliveries member
    WHERE member.batch_id = delivery_batches.id AND NOT ${replayOnceEach(status, 'member')})`
}

export interface DeliveriesSql {
  /** Drops the leases of these deliveries (at least one). */
  release(ids: number[]): Awaitable<void>
  /** Deletes these deliveries (at least one) with their attempts, and batches they leave empty. */
  discard(deliveryIds: number[]): Awaitable<void>
  /** When the earliest unleased pending or retrying delivery is due, or null. */
  nextDueAt(destinationId: string, now: number): Awaitable<number | null>
  /** Newest first. */
  list(destinationId: string, filter: DeliveryListFilter): Awaitable<DeliveryRow[]>
  get(id: number): Awaitable<DeliveryRow | undefined>
  /**
   * Final deliveries only, back to pending at `now` with a fresh window; returns how many. By filter,
   * each call at most once (`replayOnceEach`).
   */
  replay(filter: ReplayFilter, now: number): Awaitable<number>
  /**
   * Dead-letters a destination's unleased pending and retrying deliveries (and batches, with their
   * members) whose window started (first attempt, else creation) at or before `startedBefore`.
   * Returns how many deliveries.
   */
  deadLetterWaiting(destinationId: string, startedBefore: number, now: number): Awaitable<number>
  count(filter: DeliveryCountFilter): Awaitable<number>
  countByState(destinationId: string): Awaitable<StateCountRow[]>
  /** Per destination and state (pending, retrying only): how many, and the earliest next_attempt_at. */
  backlog(): Awaitable<BacklogRow[]>
}

/** Leases up to `limit` (≥ 1) due deliveries of a destination until `leaseUntil`; any order. */
export type ClaimDeliveriesSql = (
  destinationId: string,
  limit: number,
  now: number,
  leaseUntil: number,
) => Awaitable<ClaimRow[]>

/**
 * New states (leases released) and attempts, in one transaction. Gone deliveries get no attempts.
 * Then each of `claims` (limits ≥ 1) as `ClaimDeliveriesSql` makes it, in the same transaction where
 * the backend can: one rows list per claim.
 */
export type RecordOutcomesSql = (
  outcomes: OutcomeRows,
  now: number,
  claims: ClaimSpec[],
) => Awaitable<ClaimRow[][]>

const parseUrls = (text: string | null): string[] => (text ? (JSON.parse(text) as string[]) : [])

/**
 * The message's userId and anonymousId, and its event (a track call's) or name (a page or screen
 * call's), read from its payload.
 */
function whoAndWhat(payload: string): {
  userId: string | null
  anonymousId: string | null
  event: string | null
} {
  let message: Record<string, unknown>
  try {
    message = JSON.parse(payload) as Record<string, unknown>
  } catch {
    // Stored calls are JSON; anything else names nobody.
    return { userId: null, anonymousId: null, event: null }
  }
  const text = (value: unknown) =>
    typeof value === 'string' || typeof value === 'number' ? String(value) : null
  return {
    userId: text(message?.userId),
    anonymousId: text(message?.anonymousId),
    event: text(message?.event) ?? text(message?.name),
  }
}

/** Claimed deliveries in id order (the order they were created in). */
export function toClaimedDeliveries(destinationId: string, rows: ClaimRow[]): ClaimedDelivery[] {
  return rows
    .sort((a, b) => a.id - b.id)
    .map((row) => ({
      id: row.id,
      destinationId,
      sourceId: row.source_id,
      receivedAt: Number(row.received_at),
      attemptCount: row.attempt_count,
      firstAttemptAt: row.first_attempt_at,
      closedUrls: parseUrls(row.closed_urls),
      payload: JSON.parse(row.payload) as Record<string, unknown>,
      replayId: row.replay_id ?? null,
    }))
}

export function toOutcomeRows(outcomes: DeliveryOutcome[], now: number): OutcomeRows {
  const deliveries: OutcomeRow[] = new Array(outcomes.length)
  const attempts: OutcomeRows['attempts'] = []
  for (let i = 0; i < outcomes.length; i++) {
    const outcome = outcomes[i]!
    for (const attempt of outcome.attempts) attempts.push({ deliveryId: outcome.deliveryId, attempt })
    deliveries[i] = {
      id: outcome.deliveryId,
      status: outcome.status,
      deadLettered: outcome.deadLettered,
      nextAttemptAt: outcome.nextAttemptAt ?? now,
      firstAttemptAt: outcome.firstAttemptAt,
      closedUrls: outcome.closedUrls.length > 0 ? JSON.stringify(outcome.closedUrls) : null,
    }
  }
  return { deliveries, attempts }
}

/**
 * Deliveries with their attempts (oldest first), from a delivery query and an attempts query; a
 * delivery in a batch also shows its batch's attempts (`batchAttemptRows`).
 */
export function toDeliveries(
  rows: DeliveryRow[],
  attemptRows: AttemptRow[],
  batchAttemptRows: (Omit<AttemptRow, 'delivery_id'> & { batch_id: number })[] = [],
): Delivery[] {
  const byDelivery = new Map<number, DeliveryAttempt[]>()
  for (const attempt of attemptRows) {
    const list = byDelivery.get(attempt.delivery_id) ?? []
    list.push(toAttempt(attempt))
    byDelivery.set(attempt.delivery_id, list)
  }
  const byBatch = new Map<number, DeliveryAttempt[]>()
  for (const attempt of batchAttemptRows) {
    const id = Number(attempt.batch_id)
    const list = byBatch.get(id) ?? []
    list.push(toAttempt({ ...attempt, delivery_id: 0 }))
    byBatch.set(id, list)
  }
  return rows.map((row) => {
    const batchId = row.batch_id === null || row.batch_id === undefined ? null : Number(row.batch_id)
    const own = byDelivery.get(row.id) ?? []
    const batched = batchId === null ? [] : (byBatch.get(batchId) ?? [])
    const final = isFinal(row.status as DeliveryStatus)
    return {
      id: row.id,
      destinationId: row.destination_id,
      sourceId: row.source_id,
      messageId: row.message_id,
      type: row.type as StoredMessageType,
      ...whoAndWhat(row.payload),
      status: row.status as DeliveryStatus,
      deadLettered: Boolean(row.dead_lettered),
      attemptCount: row.attempt_count,
      batchId,
      replayId: row.replay_id ?? null,
      nextAttemptAt: final ? null : row.next_attempt_at,
      firstAttemptAt: row.first_attempt_at,
      closedUrls: parseUrls(row.closed_urls),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      attempts:
        batched.length === 0 ? own : [...own, ...batched].sort((a, b) => a.attemptedAt - b.attemptedAt),
    }
  })
}

/** Counts per state (dead letters are failed ones too) and latency percentiles of recent attempts. */
export function toDeliveryStats(counts: StateCountRow[], latencies: number[]): DeliveryStats {
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

/** One backlog per destination, from its rows per state. */
export function toBacklogs(rows: BacklogRow[]): DestinationBacklog[] {
  const byDestination = new Map<string, DestinationBacklog>()
  for (const row of rows) {
    let backlog = byDestination.get(row.destination_id)
    if (!backlog) {
      backlog = { destinationId: row.destination_id, pending: 0, retrying: 0, oldestDueAt: null }
      byDestination.set(row.destination_id, backlog)
    }
    backlog[row.status] = Number(row.n)
    const due = Number(row.oldest_due_at)
    backlog.oldestDueAt = backlog.oldestDueAt === null ? due : Math.min(backlog.oldestDueAt, due)
  }
  return [...byDestination.values()]
}
