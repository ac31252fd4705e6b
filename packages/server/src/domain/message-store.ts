/**
 * What ingest and retention ask of storage: accepted calls stored (with, in the same transaction, the
 * deliveries routing gives them), read back, counted, and swept once old. One area of the store
 * contract (store/store.ts, with its conventions); the store implements it in store/core/messages.ts.
 *
 * Ingest is this area's, not the deliveries': what it stores is calls, the group commit needs nothing
 * else, and on SQLite it is the one call whose messages cross to the store thread packed.
 */
import type { DestinationType } from './destinations.ts'
import type { MessageType, StoredMessageType } from './messages.ts'

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
  /**
   * Per input message, in order: true when accepted, false when dropped as a duplicate. An accepted
   * call is stored, unless a deletion request that committed first erases it (received before the
   * request, committed after it): that call is withheld, as if stored and erased at once.
   */
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

export interface MessageStore {
  /**
   * Stores accepted messages in one transaction: drops those whose (sourceId, messageId) was received
   * within the store's dedupe window (its `dedupeWindowMs` option; the caller keeps retention at least
   * that long), withholds those a committed deletion request erases (`erasedOnArrival`), inserts the
   * rest, and creates their delivery records for every enabled destination connected to the message's
   * source whose type is in `routeTo`. Resolves once committed.
   */
  ingest(messages: AcceptedMessage[]): Promise<IngestOutcome>
  getMessage(sourceId: string, messageId: string): Promise<StoredMessage | null>
  countMessages(sourceId?: string): Promise<number>
  /** The newest `limit` stored calls of the sources received in [from, to), newest first. */
  recentMessages(sourceIds: string[], limit: number, from: number, to: number): Promise<StoredMessage[]>
  /**
   * Retention: deletes messages received before `olderThan` whose deliveries are all final and which
   * profiles have consumed, with those deliveries and their attempts. Returns how many messages went.
   */
  sweep(olderThan: number): Promise<{ messages: number }>
}
