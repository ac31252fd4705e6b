/**
 * The `replays` table, with `deliveries.replay_id` (the replay a delivery was created by): replays,
 * their leases and cursors, the steps that create their deliveries, and their cancellation.
 */
import type { StoredMessageType } from '../../domain/messages.ts'
import type {
  LeasedReplay,
  Replay,
  ReplayCandidate,
  ReplayStatus,
  ReplayStep,
  ReplayStepResult,
} from '../../domain/replays.ts'
import type { Awaitable, Flag } from './sql-types.ts'

export interface ReplayRow {
  id: string
  destination_id: string
  source_ids: string
  from_at: number
  to_at: number
  types: string | null
  events: string | null
  forced: Flag
  status: string
  scan_done: Flag
  cursor_at: number
  cursor_pk: number
  scanned: number
  matched: number
  enqueued: number
  skipped: number
  delivered: number
  failed: number
  error: string | null
  runner: string | null
  lease_until: number | null
  created_at: number
  finished_at: number | null
}

/** Final deliveries of replays, per replay and status. */
export interface ReplayCountRow {
  replay_id: string
  status: string
  n: number
}

export interface ReplayCandidateRow {
  pk: number
  received_at: number
  payload: string
}

/** What cancelling left: the replay's deliveries that are still leased (being sent right now). */
export interface CancelResult {
  leased: number
}

export interface ReplaysSql {
  insert(row: ReplayRow): Awaitable<void>
  /** Newest first. */
  list(destinationId: string): Awaitable<ReplayRow[]>
  get(id: string): Awaitable<ReplayRow | undefined>
  /** Delivered and failed deliveries of these replays (at least one). */
  counts(ids: string[]): Awaitable<ReplayCountRow[]>
  /** Leases every RUNNING replay this runner holds or whose lease ran out, until `leaseUntil`. */
  lease(runner: string, now: number, leaseUntil: number): Awaitable<ReplayRow[]>
  /** Up to `limit` calls of the sources received before `to`, after the cursor, in (received_at, pk) order. */
  candidates(
    sourceIds: string[],
    to: number,
    cursorAt: number,
    cursorPk: number,
    limit: number,
  ): Awaitable<ReplayCandidateRow[]>
  /**
   * One step, in one transaction: moves the cursor (only if the replay is still RUNNING, leased by
   * this runner and at `step.from`), creates the deliveries of the matched calls (skipping those the
   * destination has delivered or waiting, unless forced) and adds to the counters. Null when the
   * condition failed and nothing was written.
   */
  step(step: ReplayStep, now: number): Awaitable<ReplayStepResult | null>
  /** The replay's deliveries not final yet (pending or retrying). */
  outstanding(replayId: string): Awaitable<number>
  /**
   * Whether the destination has live (not replayed) work due now and not leased: a delivery, or for a
   * batching destination a formed batch (messages waiting for their batch to fill are not yet due).
   */
  liveDue(destinationId: string, now: number, batching: boolean): Awaitable<boolean>
  /**
   * FINISHED with its final counts, if the runner holds it, its window is read and none of its
   * deliveries is waiting. True when it finished.
   */
  finish(id: string, runner: string, now: number): Awaitable<boolean>
  fail(id: string, error: string, now: number): Awaitable<void>
  /**
   * CANCELLED (if RUNNING), its unleased waiting deliveries deleted, its counts kept; undefined when
   * there is no such replay of that destination.
   */
  cancel(destinationId: string, id: string, now: number): Awaitable<CancelResult | undefined>
  /** Which of these replays are no longer RUNNING. */
  stopped(ids: string[]): Awaitable<string[]>
}

const parseList = <T>(text: string | null): T[] | null => (text === null ? null : (JSON.parse(text) as T[]))

export function toReplay(row: ReplayRow, counts: ReplayCountRow[] = []): Replay {
  const status = row.status as ReplayStatus
  let delivered = Number(row.delivered)
  let failed = Number(row.failed)
  // While it runs, its figures are its deliveries'; once it ended they were kept on its row.
  if (status === 'RUNNING') {
    delivered = 0
    failed = 0
    for (const count of counts) {
      if (count.replay_id !== row.id) continue
      if (count.status === 'delivered') delivered += Number(count.n)
      else if (count.status === 'failed') failed += Number(count.n)
    }
  }
  return {
    id: row.id,
    destinationId: row.destination_id,
    sourceIds: JSON.parse(row.source_ids) as string[],
    from: Number(row.from_at),
    to: Number(row.to_at),
    types: parseList<StoredMessageType>(row.types),
    events: parseList<string>(row.events),
    force: Boolean(row.forced),
    status,
    scanned: Number(row.scanned),
    matched: Number(row.matched),
    enqueued: Number(row.enqueued),
    skipped: Number(row.skipped),
    delivered,
    failed,
    error: row.error,
    createdAt: Number(row.created_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
  }
}

export function toLeasedReplay(row: ReplayRow): LeasedReplay {
  return {
    ...toReplay(row),
    cursor: { receivedAt: Number(row.cursor_at), pk: Number(row.cursor_pk) },
    scanDone: Boolean(row.scan_done),
  }
}

export function toReplayCandidates(rows: ReplayCandidateRow[]): ReplayCandidate[] {
  return rows.map((row) => ({
    pk: Number(row.pk),
    receivedAt: Number(row.received_at),
    payload: row.payload,
  }))
}
