/**
 * Replays: the stored calls of some sources, received in a window, sent again to one destination
 * through its subscription, filters, mapping and batching (docs/webhooks.md, "Replay and backfill").
 *
 * A replay is RUNNING until every call of its window was read and every delivery it created is final
 * (FINISHED), or until it is cancelled (CANCELLED) or cannot go on (FAILED, with the reason).
 */
import type { StoredMessageType } from './messages.ts'

export const REPLAY_STATUSES = ['RUNNING', 'FINISHED', 'CANCELLED', 'FAILED'] as const
export type ReplayStatus = (typeof REPLAY_STATUSES)[number]

/** The request header every replayed request carries, with the replay's id. */
export const REPLAY_HEADER = 'x-sluice-replay'

/** What a replay is asked to send. */
export interface ReplayRequest {
  destinationId: string
  /** The sources whose calls are replayed: every source connected to the destination when absent. */
  sourceIds?: string[]
  /** Epoch ms, inclusive. */
  from: number
  /** Epoch ms, exclusive. */
  to: number
  /** Only calls of these types. Default: every type. */
  types?: StoredMessageType[]
  /** Only track calls with these event names (and other types, unless `types` leaves them out). Default: every call. */
  events?: string[]
  /** Send calls the destination already got (or will get) too. Default false. */
  force?: boolean
}

export interface Replay {
  id: string
  destinationId: string
  sourceIds: string[]
  from: number
  to: number
  types: StoredMessageType[] | null
  events: string[] | null
  force: boolean
  status: ReplayStatus
  /** Calls of the window read so far. */
  scanned: number
  /** Of those, the ones the filters of the replay and the destination's subscription and filters let through. */
  matched: number
  /** Deliveries created. */
  enqueued: number
  /** Matched calls left out because the destination already got them (or has them waiting). */
  skipped: number
  delivered: number
  failed: number
  /** Why a FAILED replay stopped. */
  error: string | null
  createdAt: number
  finishedAt: number | null
}

/** Where a replay's walk of its window stands: calls are read in (receivedAt, pk) order. */
export interface ReplayCursor {
  receivedAt: number
  pk: number
}

/** A replay leased to the process that runs it, with its cursor. */
export interface LeasedReplay extends Replay {
  cursor: ReplayCursor
  scanDone: boolean
}

/** One call of a replay's window, as its runner reads it. */
export interface ReplayCandidate {
  pk: number
  receivedAt: number
  /** The stored message, as JSON text. */
  payload: string
}

/** What one step of a replay commits: the calls to deliver, and how far the cursor moves. */
export interface ReplayStep {
  replayId: string
  runner: string
  /** The cursor the step was read from: the step commits only if it is still the replay's. */
  from: ReplayCursor
  to: ReplayCursor
  scanDone: boolean
  scanned: number
  /** The pks of the matched calls: a delivery each, unless skipped. */
  matched: number[]
  leaseUntil: number
}

/** A replay step's result: null when it was not committed (the lease or the replay's state changed). */
export interface ReplayStepResult {
  enqueued: number
  skipped: number
}
