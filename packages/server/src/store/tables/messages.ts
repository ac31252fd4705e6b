/**
 * The `messages` table (and, on PostgreSQL, `dedupe_keys`, which arbitrates duplicates between
 * processes), with ingest: the hot statement that stores a group commit's messages.
 */
import type { AcceptedMessage, IngestOutcome, StoredMessage } from '../../domain/message-store.ts'
import type { StoredMessageType } from '../../domain/messages.ts'
import type { Awaitable } from './sql-types.ts'

export interface MessageRow {
  pk: number
  source_id: string
  message_id: string
  type: string
  received_at: number
  payload: string
}

export interface MessagesSql {
  /** The newest copy of a message. */
  latest(sourceId: string, messageId: string): Awaitable<MessageRow | undefined>
  count(sourceId: string | undefined): Awaitable<number>
  /** The newest `limit` messages of the sources received in [from, to), newest first (by receive time, then pk). */
  recent(sourceIds: string[], limit: number, from: number, to: number): Awaitable<MessageRow[]>
}

/**
 * Stores `messages` (at least one) in one transaction, as `plan` groups them (planIngest: repeats
 * inside the batch are already left out of `firsts`). A first occurrence whose (source, messageId)
 * was received after `duplicatesAfter` (by this store or, for PostgreSQL, any process) is a duplicate
 * too. The rest are stored with a delivery for every enabled destination connected to their source
 * whose type is in their `routeTo`, each source's accepted and duplicate counters grow (duplicates =
 * `total` - stored), and so do its per-minute figures (source_rollups: stored calls by minute of
 * receipt, rollups.ts).
 */
export type IngestSql = (
  messages: AcceptedMessage[],
  plan: SourceBatch[],
  now: number,
  duplicatesAfter: number,
) => Awaitable<IngestOutcome>

/**
 * What a group commit asks the SQL to do, worked out once for both backends: the messages grouped by
 * source, each source's repeats of a messageId inside the batch left out (the first occurrence stands
 * for them: a repeat is a duplicate whatever the store holds), and how many messages each source sent
 * in all, so that its duplicate counter can grow by `total - stored`.
 */
export interface SourceBatch {
  sourceId: string
  /** Every message of the batch from this source, repeats included. */
  total: number
  /** Indexes (into the batch) of this source's messages, first occurrences only, in batch order. */
  firsts: number[]
}

/** The batch by source, in order of each source's first message. */
export function planIngest(messages: readonly AcceptedMessage[]): SourceBatch[] {
  const bySource = new Map<string, { batch: SourceBatch; seen: Set<string> }>()
  for (let index = 0; index < messages.length; index++) {
    const { sourceId, messageId } = messages[index]!
    let entry = bySource.get(sourceId)
    if (!entry) {
      entry = { batch: { sourceId, total: 0, firsts: [] }, seen: new Set() }
      bySource.set(sourceId, entry)
    }
    entry.batch.total++
    if (entry.seen.has(messageId)) continue
    entry.seen.add(messageId)
    entry.batch.firsts.push(index)
  }
  return [...bySource.values()].map((entry) => entry.batch)
}

export function toStoredMessage(row: MessageRow): StoredMessage {
  return {
    pk: row.pk,
    sourceId: row.source_id,
    messageId: row.message_id,
    type: row.type as StoredMessageType,
    receivedAt: row.received_at,
    payload: JSON.parse(row.payload) as Record<string, unknown>,
  }
}
