/**
 * The store contract. Every other part of the server talks to durable state only through this
 * interface, so the embedded SQLite store and the PostgreSQL store are interchangeable. The records
 * it stores (sources, destinations, deliveries) are the domain's (`../domain/`); the types here are
 * only what crosses into and out of storage.
 *
 * Conventions:
 * - Every method is async, even where SQLite could answer synchronously.
 * - Times are epoch milliseconds (numbers) here; the HTTP layers render them as ISO 8601.
 * - A resolved promise from a write means the change is committed (durable).
 */

import type { Audience, AudienceNode } from '../domain/audiences.ts'
import type { ComputedTrait } from '../domain/computed-traits.ts'
import type {
  Delivery,
  DeliveryAttempt,
  DeliveryStats,
  DeliveryStatus,
  ReplayableStatus,
} from '../domain/deliveries.ts'
import type { Destination, DestinationType, WebhooksSettings } from '../domain/destinations.ts'
import type { MessageType, StoredMessageType } from '../domain/messages.ts'
import type { Profile, ProfileEvent, ProfileIdentity } from '../domain/profiles.ts'
import type { Regulation, RegulationStatus, RegulationType, Suppression } from '../domain/regulations.ts'
import type { MinuteFigures, SourceMinute } from '../domain/series.ts'
import type { Source, SourceStats } from '../domain/sources.ts'
import type { AccessToken, TokenRole } from '../domain/tokens.ts'

export interface NewSource {
  name: string
  enabled: boolean
}

export interface SourcePatch {
  name?: string
  enabled?: boolean
  /** When true, a new write key replaces the old one, which stops working at once. */
  rotateWriteKey?: boolean
}

export interface NewAccessToken {
  name: string
  role: TokenRole
  /** Hex SHA-256 of the token; the token itself is never stored. */
  tokenHash: string
}

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

/** A message the Tracking API accepted, already enriched (messageId, timestamps, context.ip, merges). */
export interface AcceptedMessage {
  sourceId: string
  messageId: string
  type: MessageType
  receivedAt: number
  /** Destination types this message may go to, as decided by the router from its `integrations`. */
  routeTo: readonly DestinationType[]
  /** The full enriched message as JSON text (serialized once by the Tracking API, stored as is). */
  payloadJson: string
  /** Who the message is about (its `userId`), so a deletion request finds it; absent when anonymous. */
  userId?: string | null
  /** An alias's `previousId`: the user it was known as before, also found by a deletion request. */
  previousId?: string | null
}

export interface IngestOutcome {
  /** Per input message, in order: true when stored, false when dropped as a duplicate. */
  stored: boolean[]
  /** Delivery records created (one per message per enabled, connected, routed destination). */
  deliveriesCreated: number
}

export interface StoredMessage {
  pk: number
  sourceId: string
  messageId: string
  type: StoredMessageType
  receivedAt: number
  payload: Record<string, unknown>
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
}

/** A claim made with `Store.recordOutcomes`: the arguments of `Store.claimDeliveries`. */
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
 * What `Store.watch` announces. `privacy`: a regulation changed the suppressions or erasures in force.
 * `messages`: messages were stored by this process (not announced to other processes: their profile
 * workers find them by polling).
 */
export type StoreEvent = 'deliveries' | 'config' | 'privacy' | 'messages'

export interface NewRegulation {
  type: RegulationType
  /** 1 to 5,000 distinct user ids (the service checks). */
  subjectIds: string[]
  /** Existing source ids, or null for every source. */
  sourceIds: string[] | null
}

/** Newest first. */
export interface RegulationListFilter {
  status?: RegulationStatus
  limit: number
}

/** The calls a deletion request erases: its users' messages in its sources, received up to its creation. */
export interface ErasureScope {
  regulationId: string
  userIds: string[]
  sourceIds: string[] | null
  createdAt: number
}

/** One batch of erasure, committed. */
export interface ErasureStep {
  regulationId: string
  /** Messages erased by this batch (with their deliveries and attempts). */
  erased: number
  /** True when nothing of the request is left to erase. */
  done: boolean
}

/** A destination's deliveries waiting to be sent (the metrics' backlog gauges). */
export interface DestinationBacklog {
  destinationId: string
  pending: number
  retrying: number
  /** When the earliest pending or retrying delivery was (or is) due; null when none waits. */
  oldestDueAt: number | null
}

/** A computed trait to create (the domain has checked it); the store adds id, status and times. */
export type NewComputedTrait = Omit<ComputedTrait, 'id' | 'status' | 'error' | 'createdAt' | 'updatedAt'>

/** An audience to create (the domain has checked its definition). */
export type NewAudience = Omit<Audience, 'id' | 'status' | 'error' | 'lastSyncAt' | 'createdAt' | 'updatedAt'>

/** Of a computed trait or an audience. */
export interface ComputedTraitPatch {
  name?: string
  destinationIds?: string[]
  /** false: disabled (neither evaluated nor synced); true: enabled again (a failed one is retried). */
  enabled?: boolean
  /** A new definition: computed over history again; only values that change are sent. */
  definition?: Pick<ComputedTrait, 'kind' | 'event' | 'property' | 'where' | 'withinDays'>
}

export interface AudiencePatch {
  name?: string
  destinationIds?: string[]
  /** As for computed traits. */
  enabled?: boolean
  /** A new definition: computed over history again; only memberships that change are sent. */
  definition?: AudienceNode
  includeAnonymous?: boolean
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

export interface Store {
  readonly kind: 'sqlite' | 'postgres'

  /** Applies pending numbered migrations. Safe to call on every start. */
  migrate(): Promise<void>
  /** True when the store answers a trivial query. */
  ping(): Promise<boolean>
  close(): Promise<void>

  // --- sources ---
  createSource(input: NewSource): Promise<Source>
  listSources(): Promise<Source[]>
  getSource(id: string): Promise<Source | null>
  getSourceByWriteKey(writeKey: string): Promise<Source | null>
  updateSource(id: string, patch: SourcePatch): Promise<Source | null>
  /** Deletes the source, its connections, and its stored messages and deliveries. */
  deleteSource(id: string): Promise<boolean>
  getSourceStats(id: string): Promise<SourceStats>
  /** Adds to the persistent rejected-message counter of a source. */
  countRejected(sourceId: string, count: number): Promise<void>

  // --- destinations ---
  createDestination(input: NewDestination): Promise<Destination>
  listDestinations(): Promise<Destination[]>
  getDestination(id: string): Promise<Destination | null>
  updateDestination(id: string, patch: DestinationPatch): Promise<Destination | null>
  deleteDestination(id: string): Promise<boolean>

  // --- ingest ---
  /**
   * Stores accepted messages in one transaction: drops those whose (sourceId, messageId) was received
   * within the store's dedupe window (its `dedupeWindowMs` option; the caller keeps retention at least
   * that long), inserts the rest, and creates their delivery records for every enabled destination
   * connected to the message's source whose type is in `routeTo`. Resolves once committed.
   */
  ingest(messages: AcceptedMessage[]): Promise<IngestOutcome>
  getMessage(sourceId: string, messageId: string): Promise<StoredMessage | null>
  countMessages(sourceId?: string): Promise<number>
  countDeliveries(filter?: DeliveryCountFilter): Promise<number>

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
  /** When the destination's earliest unleased pending or retrying delivery is due, or null. */
  nextDueAt(destinationId: string, now: number): Promise<number | null>
  /** Newest first. `before` is an id cursor for paging. */
  listDeliveries(destinationId: string, filter: DeliveryListFilter): Promise<Delivery[]>
  getDelivery(id: number): Promise<Delivery | null>
  /**
   * Schedules final deliveries (failed or delivered) to go out again at `now`, with a fresh retry
   * window. Deliveries that are still pending or retrying are left alone. Returns how many were reset.
   */
  replayDeliveries(filter: ReplayFilter, now: number): Promise<number>
  deliveryStats(destinationId: string): Promise<DeliveryStats>
  /** Pending and retrying counts and the earliest due time, for every destination that has any. */
  deliveryBacklog(): Promise<DestinationBacklog[]>

  /**
   * Calls `listener` after every committed change that gives the delivery engine something to do:
   * `deliveries` when deliveries were created or rescheduled (an ingest that created some, a replay
   * that reset some), `config` when destinations were created, updated or deleted. Changes made through
   * this store object are announced right after their commit, before the writing call resolves; a store
   * shared by several processes (PostgreSQL) also announces the other processes' changes as they
   * arrive. Resolves, once listening, with a function that stops listening.
   */
  watch(listener: (event: StoreEvent) => void): Promise<() => Promise<void>>

  // --- privacy ---
  /**
   * Records a regulation and does, in the same transaction, everything that must hold once it is
   * acknowledged: suppressions added or lifted; for a deletion, the unsent deliveries of the users'
   * messages cancelled, and one `delete` notification per user queued for every enabled Webhooks
   * destination connected to a source the user sent calls to; the erasure itself left to `eraseNext`.
   */
  createRegulation(input: NewRegulation): Promise<Regulation>
  getRegulation(id: string): Promise<Regulation | null>
  listRegulations(filter: RegulationListFilter): Promise<Regulation[]>
  /** The suppressions in force, by user id. */
  listSuppressions(): Promise<Suppression[]>
  /**
   * Changes whenever a regulation is created (cheap to ask): a process that holds the suppressions in
   * memory polls it and reloads them only when it changed.
   */
  privacyVersion(): Promise<string>
  /** Deletion requests created since `since` or still erasing: what claimed deliveries are checked against. */
  recentErasures(since: number): Promise<ErasureScope[]>
  /**
   * Erases up to `limit` messages of the oldest deletion request with erasure left (one transaction;
   * on PostgreSQL a request another process is erasing right now is passed over). Null when none is left.
   */
  eraseNext(limit: number): Promise<ErasureStep | null>
  /**
   * Erases the profiles of the users of deletion requests whose messages are all erased (so the
   * profile worker cannot rebuild them), and records how many went. Returns how many requests it did.
   */
  eraseProfilesOfDeletions(): Promise<number>
  /** Brings unfinished regulations' statuses up to date; returns how many finished now. */
  settleRegulations(now: number): Promise<number>
  /** Adds to the persistent suppressed-message counter of a source. */
  countSuppressed(sourceId: string, count: number): Promise<void>

  // --- delivery figures over time ---
  /**
   * Rolls complete minutes of attempts up into per-minute figures (a bounded span per call; the
   * housekeeper calls it every minute). Safe to run by several processes at once. Returns rows written.
   */
  rollUpDeliveries(now: number): Promise<number>
  /** A destination's figures per minute in `[from, to)`: rolled up, plus the minutes not rolled up yet. */
  deliveryMinutes(destinationId: string, from: number, to: number): Promise<MinuteFigures[]>
  /** Calls a source stored per minute (by the minute they were received) in `[from, to)`; quiet minutes are left out. */
  sourceMinutes(sourceId: string, from: number, to: number): Promise<SourceMinute[]>

  // --- access tokens ---
  createToken(input: NewAccessToken): Promise<AccessToken>
  /** Oldest first. */
  listTokens(): Promise<AccessToken[]>
  getToken(id: string): Promise<AccessToken | null>
  findTokenByHash(tokenHash: string): Promise<AccessToken | null>
  /** Records a use of the token at `at`. */
  touchToken(id: string, at: number): Promise<void>
  deleteToken(id: string): Promise<boolean>

  // --- profiles ---
  /**
   * The profile worker's step: consumes up to `limit` (default 500) committed messages that profiles
   * have not consumed yet, in one transaction with the profile cursor, so a crash loses nothing and
   * nothing is consumed twice. Returns how many were consumed: 0 when there were none, or when another
   * process (PostgreSQL) consumed the same ones first.
   */
  consumeIntoProfiles(limit?: number, now?: number): Promise<number>
  /** A profile by id; a profile merged into another answers with the survivor. */
  getProfile(id: string): Promise<Profile | null>
  findProfile(identity: ProfileIdentity): Promise<Profile | null>
  /** The profile's calls, newest first; `before` is the `next` of the previous page. */
  listProfileEvents(
    profileId: string,
    page: { limit: number; before?: number | undefined },
  ): Promise<{ events: ProfileEvent[]; next: number | null }>
  /**
   * Erasure: deletes the profiles holding one of these userIds — only those with a call from one of
   * `sourceIds`, when given — with their identities, traits and calls. Nothing is sent for them.
   * Returns how many profiles went.
   */
  eraseProfilesOfUsers(userIds: string[], sourceIds?: string[]): Promise<number>

  // --- computed traits and audiences ---
  /**
   * Creates it and queues every profile with a call of its event for evaluation (the backfill: status
   * `computing` until the queue has drained). Null when its key is taken.
   */
  createComputedTrait(input: NewComputedTrait): Promise<ComputedTrait | null>
  /** Oldest first. */
  listComputedTraits(): Promise<ComputedTrait[]>
  getComputedTrait(id: string): Promise<ComputedTrait | null>
  /**
   * Name, destinations, definition, enabled (see ComputedTraitPatch); its profiles are queued again, so
   * a new destination receives every value and a new definition is computed over history.
   */
  updateComputedTrait(id: string, patch: ComputedTraitPatch): Promise<ComputedTrait | null>
  /** With its values and sent state. Nothing is sent. */
  deleteComputedTrait(id: string): Promise<boolean>
  /**
   * Creates it and queues every profile for evaluation (the backfill: status `computing` until the
   * queue has drained). Null when its key is taken (by an audience or a computed trait).
   */
  createAudience(input: NewAudience): Promise<Audience | null>
  /** Oldest first. */
  listAudiences(): Promise<Audience[]>
  getAudience(id: string): Promise<Audience | null>
  /** As updateComputedTrait; every profile is queued again. */
  updateAudience(id: string, patch: AudiencePatch): Promise<Audience | null>
  /** With its memberships and sent state. Nothing is sent. */
  deleteAudience(id: string): Promise<boolean>
  /**
   * How many profiles a definition holds for now (identified ones only unless `includeAnonymous`),
   * with up to `sampleSize` of their ids; nothing is saved. Reads every profile.
   */
  previewAudience(
    definition: AudienceNode,
    options: { includeAnonymous: boolean; sampleSize: number },
  ): Promise<{ size: number; sample: string[] }>
  /** How many profiles have a value of this computed trait, or are members of this audience. */
  computationSize(id: string): Promise<number>
  /**
   * Evaluates up to `limit` (default 500) queued profiles: current values, and an identify delivery to
   * each destination whose last sent value differs, all committed together with the queue entries'
   * removal. Announces `deliveries` when it created some.
   */
  evaluateComputations(
    limit?: number,
    now?: number,
  ): Promise<{ evaluated: number; deliveriesCreated: number }>
  /**
   * Queues the profiles with a call that left a trait's `withinDays` window between `after` and
   * `upTo` (epoch ms). Returns how many were queued.
   */
  queueWindowEdges(after: number, upTo: number): Promise<number>

  // --- housekeeping ---
  /**
   * Retention: deletes messages received before `olderThan` whose deliveries are all final and which
   * profiles have consumed, with those deliveries and their attempts. Returns how many messages went.
   */
  sweep(olderThan: number): Promise<{ messages: number }>
}
