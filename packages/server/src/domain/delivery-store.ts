/**
 * What destinations and deliveries ask of storage: destinations with their connected sources, and
 * their deliveries — claimed, recorded, listed, replayed, counted. One area of the store contract
 * (store/store.ts, with its conventions); the store implements it in store/core/deliveries.ts.
 */
import type {
  Delivery,
  DeliveryAttempt,
  DeliveryStats,
  DeliveryStatus,
  ReplayableStatus,
} from './deliveries.ts'
import type { Destination, DestinationType, WebhooksSettings } from './destinations.ts'
import type { StoredMessageType } from './messages.ts'

export interface NewDestination {
  name: string
  type: DestinationType
  enabled: boolean
  sourceIds: string[]
  settings: WebhooksSettings
}

export interface DestinationPatch {
  name?: string
  enabled?: boolean
  sourceIds?: string[]
  settings?: WebhooksSettings
}

/** A due delivery leased to this process, with what it needs to send. */
export interface ClaimedDelivery {
  id: number
  destinationId: string
  /** The source and receive time of its message: what a deletion request's erasure is judged by. */
  sourceId: string
  receivedAt: number
  attemptCount: number
  firstAttemptAt: number | null
  closedUrls: string[]
  /** The stored (enriched) message. */
  payload: Record<string, unknown>
  /** The replay that created it (its requests say so); null for live deliveries. */
  replayId: string | null
}

/** A claim made with `recordOutcomes`: the arguments of `claimDeliveries`. */
export interface ClaimRequest {
  destinationId: string
  limit: number
  now: number
  leaseMs: number
}

/** The result of one attempt of a claimed delivery: recorded atomically, and the lease released. */
export interface DeliveryOutcome {
  deliveryId: number
  attempts: DeliveryAttempt[]
  status: 'delivered' | 'retrying' | 'failed'
  deadLettered: boolean
  /** For `retrying`: when to try again. */
  nextAttemptAt: number | null
  firstAttemptAt: number
  closedUrls: string[]
}

/**
 * A due delivery of a batching destination that is in no batch yet: what batches are formed from, with
 * what a batch member needs to be sent (a batch formed and claimed at once sends the candidates read).
 * Its `replayId`: a batch holds the messages of one replay, or live ones only.
 */
export interface BatchCandidate extends ClaimedDelivery {
  /** When it became due (its creation, for a new delivery): the wait limit counts from here. */
  dueAt: number
}

/** A batch just formed and leased by `formClaimedBatches`, with the deliveries that joined it. */
export interface FormedBatch {
  id: number
  /** In id order: the order its request carries them. */
  memberIds: number[]
}

/** A due batch leased to this process, with its members (oldest first) and what they need to send. */
export interface ClaimedBatch {
  id: number
  destinationId: string
  attemptCount: number
  firstAttemptAt: number | null
  closedUrls: string[]
  members: ClaimedDelivery[]
}

/** The result of one attempt of a claimed batch: recorded on the batch and on every member. */
export type BatchOutcome = Omit<DeliveryOutcome, 'deliveryId'> & { batchId: number }

/** A destination's deliveries waiting to be sent (the metrics' backlog gauges). */
export interface DestinationBacklog {
  destinationId: string
  pending: number
  retrying: number
  /** When the earliest pending or retrying delivery was (or is) due; null when none waits. */
  oldestDueAt: number | null
}

/** What a destination's subscription and filters kept from it so far (every destination that has any). */
export interface DestinationGatedCounts {
  destinationId: string
  filtered: number
  sampledOut: number
}

/** Which deliveries a count covers; every one when empty. */
export interface DeliveryCountFilter {
  destinationId?: string
  status?: DeliveryStatus
}

/** One page of a destination's deliveries, newest first. `before` is an id cursor. */
export interface DeliveryListFilter {
  status?: DeliveryStatus
  /** Only deliveries of messages of this type. */
  type?: StoredMessageType
  /** Only deliveries of messages with this `userId`. */
  userId?: string
  /** Only deliveries created at or after this time (epoch ms). */
  since?: number
  /** Only deliveries created before this time (epoch ms). */
  until?: number
  limit: number
  before?: number
}

/** Final deliveries to schedule again: by id, or a destination's with one final status (created since a time). */
export type ReplayFilter =
  | { ids: number[] }
  | { destinationId: string; status: ReplayableStatus; since?: number }

export interface DeliveryStore {
  /**
   * Seals with the current secret key every destination's settings stored in clear or under the
   * previous key (a rotation), each only if unchanged meanwhile; answers how many. Throws when a
   * destination's settings were sealed with a key that is not configured. Run by `migrate`.
   */
  resealSecrets(): Promise<number>
  // --- destinations ---
  createDestination(input: NewDestination): Promise<Destination>
  listDestinations(): Promise<Destination[]>
  getDestination(id: string): Promise<Destination | null>
  updateDestination(id: string, patch: DestinationPatch): Promise<Destination | null>
  deleteDestination(id: string): Promise<boolean>

  // --- deliveries ---
  /**
   * Leases up to `limit` due deliveries of one destination (pending or retrying, next attempt due,
   * no live lease) until `now + leaseMs`, oldest due first. A lease that runs out (its process died)
   * makes the delivery claimable again.
   */
  claimDeliveries(
    destinationId: string,
    limit: number,
    now: number,
    leaseMs: number,
  ): Promise<ClaimedDelivery[]>
  /**
   * Records attempts and new states in one transaction, releasing the leases; then, in the same call
   * (one store round trip for the delivery engine), makes each of `claims` as `claimDeliveries`
   * would. Resolves with the claimed deliveries, one list per claim, once the outcomes are committed.
   */
  recordOutcomes(outcomes: DeliveryOutcome[], claims?: ClaimRequest[]): Promise<ClaimedDelivery[][]>
  /** Releases leases without recording anything (shutdown before sending). */
  releaseClaims(deliveryIds: number[]): Promise<void>
  /**
   * Deletes claimed deliveries that must never be sent (a stopped replay's, or one whose message a
   * deletion request erased), with their attempts, and batches they leave empty.
   */
  discardDeliveries(deliveryIds: number[]): Promise<void>
  /** When the destination's earliest unleased pending or retrying delivery (in no batch) is due, or null. */
  nextDueAt(destinationId: string, now: number): Promise<number | null>

  // --- batches (destinations with `settings.batching`) ---
  /**
   * Up to `limit` due, unleased pending or retrying deliveries of a destination that are in no batch,
   * oldest due first. Reads only: nothing is leased.
   */
  batchCandidates(destinationId: string, limit: number, now: number): Promise<BatchCandidate[]>
  /**
   * Makes one batch of each group of delivery ids, in one transaction. A delivery joins only if it is
   * still due, unleased and in no batch (so it is in one batch at most, whoever forms batches at the
   * same time); a batch none joined is not kept. Members become `pending` like their new batch.
   * Returns how many batches were made; announces `deliveries`.
   */
  formBatches(destinationId: string, groups: number[][], now: number): Promise<number>
  /**
   * `formBatches`, each batch made leased to the caller until `now + leaseMs` in the same transaction,
   * as `claimBatches` would lease it: returns the batches made, with the deliveries that joined each
   * (the caller read their messages as candidates, so they are not read again). Announces `deliveries`.
   */
  formClaimedBatches(
    destinationId: string,
    groups: number[][],
    now: number,
    leaseMs: number,
  ): Promise<FormedBatch[]>
  /**
   * Leases up to `limit` due batches of a destination until `now + leaseMs`, as `claimDeliveries`
   * does deliveries, with their members. A batch whose members are all gone (erased) is deleted.
   */
  claimBatches(destinationId: string, limit: number, now: number, leaseMs: number): Promise<ClaimedBatch[]>
  /**
   * Records batch attempts and new states in one transaction, releasing the leases; each batch's new
   * state is copied onto every member delivery. Announces `deliveries`.
   */
  recordBatchOutcomes(outcomes: BatchOutcome[]): Promise<void>
  /** Releases batch leases without recording anything (shutdown before sending). */
  releaseBatchClaims(batchIds: number[]): Promise<void>
  /** When the destination's earliest unleased pending or retrying batch is due, or null. */
  nextBatchDueAt(destinationId: string, now: number): Promise<number | null>
  /** The stored messages of a batch's members, in the order the batch sends them. */
  batchPayloads(batchId: number): Promise<Record<string, unknown>[]>
  /** Destinations that have pending or retrying batches (also once they stop batching). */
  destinationsWithOpenBatches(): Promise<string[]>
  /** Newest first. `before` is an id cursor for paging. */
  listDeliveries(destinationId: string, filter: DeliveryListFilter): Promise<Delivery[]>
  getDelivery(id: number): Promise<Delivery | null>
  /**
   * Schedules final deliveries (failed or delivered) to go out again at `now`, with a fresh retry
   * window. Deliveries that are still pending or retrying are left alone. A delivery in a batch
   * replays its whole batch (every member). By destination and status, each call at most once: not
   * when another delivery of it to the destination is waiting (or delivered, replaying `failed`), and
   * only the newest with the status. Returns how many deliveries were reset.
   */
  replayDeliveries(filter: ReplayFilter, now: number): Promise<number>
  /**
   * Dead-letters a destination's waiting deliveries (pending or retrying, unleased; batches with their
   * members) whose retry window started at or before `startedBefore` (first attempt, else creation):
   * what ends the wait of a destination whose every URL is disabled. Returns how many; announces
   * `deliveries` when any.
   */
  deadLetterWaiting(destinationId: string, startedBefore: number, now: number): Promise<number>
  countDeliveries(filter?: DeliveryCountFilter): Promise<number>
  deliveryStats(destinationId: string): Promise<DeliveryStats>
  /** Pending and retrying counts and the earliest due time, for every destination that has any. */
  deliveryBacklog(): Promise<DestinationBacklog[]>
  /** The filtered and sampled-out counts of every destination that has any (the metrics). */
  gatedCounts(): Promise<DestinationGatedCounts[]>
}
