/**
 * The `delivery_batches` table, with `batch_attempts` (the requests of each batch attempt) and the
 * `batch_id` column of `deliveries`: batches of a batching destination, formed from its due
 * deliveries, claimed, and recorded as units.
 */
import type { DeliveryAttempt } from '../../domain/deliveries.ts'
import type { BatchCandidate, BatchOutcome, ClaimedBatch, FormedBatch } from '../../domain/delivery-store.ts'
import type { AttemptRow } from './attempts.ts'
import { type ClaimRow, type OutcomeRow, toClaimedDeliveries, toOutcomeRows } from './deliveries.ts'
import type { Awaitable } from './sql-types.ts'

/** A due delivery in no batch yet, with its message, as a claimed delivery's row. */
export type CandidateRow = ClaimRow & { next_attempt_at: number }

/** A batch just leased. */
export interface BatchClaimRow {
  id: number
  attempt_count: number
  first_attempt_at: number | null
  closed_urls: string | null
}

/** A member of a batch just leased, with its message, as a claimed delivery's row. */
export type BatchMemberRow = ClaimRow & { batch_id: number }

/** A batch's new state after an attempt, as its columns (and its members') take it. */
export type BatchOutcomeRow = OutcomeRow

/** Batches just leased, with their members. */
export interface ClaimedBatchRows {
  batches: BatchClaimRow[]
  members: BatchMemberRow[]
}

export interface BatchAttemptRow extends Omit<AttemptRow, 'delivery_id'> {
  batch_id: number
}

export interface DeliveryBatchesSql {
  /** Due, unleased pending or retrying deliveries with no batch, oldest due first. */
  candidates(destinationId: string, limit: number, now: number): Awaitable<CandidateRow[]>
  /**
   * One batch per group (of at least one id), in one transaction, leased until `leaseUntil` when not
   * null; returns the batches kept, each with the ids that joined it.
   */
  form(
    destinationId: string,
    groups: number[][],
    now: number,
    leaseUntil: number | null,
  ): Awaitable<FormedBatch[]>
  /** Leases due batches and returns them with their members; deletes batches left with no member. */
  claim(destinationId: string, limit: number, now: number, leaseUntil: number): Awaitable<ClaimedBatchRows>
  /** New states on batches and members, and the attempts, in one transaction. */
  record(
    outcomes: BatchOutcomeRow[],
    attempts: { batchId: number; attempt: DeliveryAttempt }[],
    now: number,
  ): Awaitable<void>
  /** Drops the leases of these batches (at least one). */
  release(ids: number[]): Awaitable<void>
  nextDueAt(destinationId: string, now: number): Awaitable<number | null>
  openDestinations(): Awaitable<string[]>
  /** The stored messages of a batch's members, in member (id) order. */
  payloadsOf(batchId: number): Awaitable<{ payload: string }[]>
  /** Latencies of the destination's `limit` most recent batch attempts, any order. */
  recentLatencies(destinationId: string, limit: number): Awaitable<number[]>
  /** Attempts of these batches (at least one), oldest first. */
  attemptsOf(batchIds: number[]): Awaitable<BatchAttemptRow[]>
}

/** Candidates in the order read (oldest due first). */
export function toBatchCandidates(destinationId: string, rows: CandidateRow[]): BatchCandidate[] {
  return rows.map((row) => ({
    id: Number(row.id),
    destinationId,
    sourceId: row.source_id,
    receivedAt: Number(row.received_at),
    attemptCount: row.attempt_count,
    firstAttemptAt: row.first_attempt_at === null ? null : Number(row.first_attempt_at),
    closedUrls: row.closed_urls ? (JSON.parse(row.closed_urls) as string[]) : [],
    payload: JSON.parse(row.payload) as Record<string, unknown>,
    replayId: row.replay_id ?? null,
    dueAt: Number(row.next_attempt_at),
  }))
}

/** Claimed batches in id order, each with its members in id order; batches with no member left out. */
export function toClaimedBatches(
  destinationId: string,
  { batches, members }: ClaimedBatchRows,
): ClaimedBatch[] {
  const byBatch = new Map<number, BatchMemberRow[]>()
  for (const member of members) {
    const id = Number(member.batch_id)
    const list = byBatch.get(id) ?? []
    list.push(member)
    byBatch.set(id, list)
  }
  return batches
    .map((row) => ({
      id: Number(row.id),
      destinationId,
      attemptCount: row.attempt_count,
      firstAttemptAt: row.first_attempt_at === null ? null : Number(row.first_attempt_at),
      closedUrls: row.closed_urls ? (JSON.parse(row.closed_urls) as string[]) : [],
      members: toClaimedDeliveries(destinationId, byBatch.get(Number(row.id)) ?? []),
    }))
    .filter((batch) => batch.members.length > 0)
    .sort((a, b) => a.id - b.id)
}

export function toBatchOutcomeRows(
  outcomes: BatchOutcome[],
  now: number,
): { rows: BatchOutcomeRow[]; attempts: { batchId: number; attempt: DeliveryAttempt }[] } {
  const { deliveries, attempts } = toOutcomeRows(
    outcomes.map((outcome) => ({ ...outcome, deliveryId: outcome.batchId })),
    now,
  )
  return {
    rows: deliveries,
    attempts: attempts.map(({ deliveryId, attempt }) => ({ batchId: deliveryId, attempt })),
  }
}
