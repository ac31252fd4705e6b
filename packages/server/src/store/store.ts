/**
 * The store contract. Every other part of the server talks to durable state only through this
 * interface, so the embedded SQLite store and the PostgreSQL store are interchangeable.
 *
 * Conventions:
 * - Every method is async, even where SQLite could answer synchronously.
 * - Times are epoch milliseconds (numbers) here; the HTTP layers render them as ISO 8601.
 * - A resolved promise from a write means the change is committed (durable).
 */

export type MessageType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias'
export const MESSAGE_TYPES: readonly MessageType[] = ['identify', 'track', 'page', 'screen', 'group', 'alias']

/** Destination kinds Sluice can deliver to. The name used in an `integrations` object is in `DESTINATION_NAMES`. */
export type DestinationType = 'webhooks'
export const DESTINATION_NAMES: Record<DestinationType, string> = { webhooks: 'Webhooks' }

export interface Source {
  id: string
  name: string
  writeKey: string
  enabled: boolean
  createdAt: number
}

export interface SourceStats {
  /** Messages stored and routed. */
  accepted: number
  /** Messages dropped because the same messageId came from this source within the dedupe window. */
  duplicates: number
  /** Messages refused by per-message validation. */
  rejected: number
}

export interface WebhookEndpoint {
  url: string
  headers: Record<string, string>
}

export interface WebhooksSettings {
  webhooks: WebhookEndpoint[]
  /** Never leaves the server through the management API; `null` when unset. */
  sharedSecret: string | null
}

export interface Destination {
  id: string
  name: string
  type: DestinationType
  enabled: boolean
  sourceIds: string[]
  settings: WebhooksSettings
  createdAt: number
  updatedAt: number
}

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
  routeTo: DestinationType[]
  /** The full enriched message as JSON text (serialized once by the Tracking API, stored as is). */
  payloadJson: string
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
  type: MessageType
  receivedAt: number
  payload: Record<string, unknown>
}

/**
 * Delivery state machine, one record per (message, destination):
 *   pending  -> not attempted yet
 *   retrying -> at least one retryable failure; next attempt at `nextAttemptAt`
 *   delivered (final) -> some URL answered 2xx
 *   failed (final)    -> a non-retryable answer on every URL, or the retry window ran out
 *                        (`deadLettered` = true); can be replayed
 */
export type DeliveryStatus = 'pending' | 'retrying' | 'delivered' | 'failed'
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'retrying', 'delivered', 'failed']

/** One HTTP request made for a delivery, to one URL. */
export interface DeliveryAttempt {
  attemptedAt: number
  url: string
  /** Present when the endpoint answered. */
  statusCode: number | null
  /** Why there was no 2xx (timeout, connect, tls, ssrf, http, redirect, ...); null on success. */
  errorKind: string | null
  errorText: string | null
  latencyMs: number
  /** At most 1 KB of the response body. */
  responseExcerpt: string | null
}

export interface Delivery {
  id: number
  destinationId: string
  sourceId: string
  messageId: string
  type: MessageType
  status: DeliveryStatus
  /** True when it failed because the retry window ran out. */
  deadLettered: boolean
  attemptCount: number
  /** When the next attempt is due; null once final. */
  nextAttemptAt: number | null
  firstAttemptAt: number | null
  /** URLs that gave a final non-2xx answer: later attempts skip them. */
  closedUrls: string[]
  createdAt: number
  updatedAt: number
  /** Oldest first. */
  attempts: DeliveryAttempt[]
}

/** A due delivery leased to this process, with what it needs to send. */
export interface ClaimedDelivery {
  id: number
  destinationId: string
  attemptCount: number
  firstAttemptAt: number | null
  closedUrls: string[]
  /** The stored (enriched) message. */
  payload: Record<string, unknown>
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

export interface DeliveryStats {
  pending: number
  retrying: number
  delivered: number
  /** All failed deliveries, dead-lettered ones included. */
  failed: number
  deadLettered: number
  /** Over the destination's last 1,000 attempts; null when there are none. */
  latencyP50Ms: number | null
  latencyP95Ms: number | null
}

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
   * within the last `dedupeWindowMs` (the caller keeps retention at least that long), inserts the rest, and creates their delivery records for every enabled
   * destination connected to the message's source whose type is in `routeTo`. Resolves once committed.
   */
  ingest(messages: AcceptedMessage[], dedupeWindowMs: number): Promise<IngestOutcome>
  getMessage(sourceId: string, messageId: string): Promise<StoredMessage | null>
  countMessages(sourceId?: string): Promise<number>
  countDeliveries(filter?: { destinationId?: string; status?: DeliveryStatus }): Promise<number>

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
  /** Records attempts and new states in one transaction, releasing the leases. */
  recordOutcomes(outcomes: DeliveryOutcome[]): Promise<void>
  /** Releases leases without recording anything (shutdown before sending). */
  releaseClaims(deliveryIds: number[]): Promise<void>
  /** When the destination's earliest unleased pending or retrying delivery is due, or null. */
  nextDueAt(destinationId: string, now: number): Promise<number | null>
  /** Newest first. `before` is an id cursor for paging. */
  listDeliveries(
    destinationId: string,
    filter: { status?: DeliveryStatus; limit: number; before?: number },
  ): Promise<Delivery[]>
  getDelivery(id: number): Promise<Delivery | null>
  /**
   * Schedules final deliveries (failed or delivered) to go out again at `now`, with a fresh retry
   * window. Deliveries that are still pending or retrying are left alone. Returns how many were reset.
   */
  replayDeliveries(
    filter: { ids: number[] } | { destinationId: string; status: 'failed' | 'delivered'; since?: number },
    now: number,
  ): Promise<number>
  deliveryStats(destinationId: string): Promise<DeliveryStats>

  /**
   * Optional, for stores shared by several processes (PostgreSQL LISTEN/NOTIFY): calls `listener`
   * when another process created or rescheduled deliveries (`deliveries`) or changed destinations
   * (`config`). Resolves with a function that stops listening. Single-process stores leave it out.
   */
  watch?(listener: (event: 'deliveries' | 'config') => void): Promise<() => Promise<void>>

  // --- housekeeping ---
  /**
   * Retention: deletes messages received before `olderThan` whose deliveries are all final, with
   * those deliveries and their attempts. Returns how many messages went.
   */
  sweep(olderThan: number): Promise<{ messages: number }>
}
