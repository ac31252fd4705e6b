/**
 * The messages area of the store core (domain/message-store.ts): ingest — the group commit's one
 * transaction — reads of stored calls, and retention.
 */
import type {
  AcceptedMessage,
  IngestOutcome,
  MessageStore,
  StoredMessage,
} from '../../domain/message-store.ts'
import { planIngest, toStoredMessage } from '../tables/messages.ts'
import type { Changes } from './changes.ts'
import type { StoreSql } from './store-sql.ts'
import { sweep } from './sweep.ts'

/** The SQL this area runs. */
type MessagesTables = Pick<StoreSql, 'messages' | 'ingest' | 'sweep'>

export class MessagesCore implements MessageStore {
  readonly #sql: MessagesTables
  readonly #changes: Changes
  readonly #dedupeWindowMs: number

  /** `dedupeWindowMs`: messages repeating a messageId received this recently are duplicates. */
  constructor(sql: MessagesTables, changes: Changes, dedupeWindowMs: number) {
    this.#sql = sql
    this.#changes = changes
    this.#dedupeWindowMs = dedupeWindowMs
  }

  async ingest(messages: AcceptedMessage[]): Promise<IngestOutcome> {
    if (messages.length === 0) return { stored: [], deliveriesCreated: 0 }
    const now = Date.now()
    const outcome = await this.#sql.ingest(messages, planIngest(messages), now, now - this.#dedupeWindowMs)
    // Before the Tracking API's requests resolve: the delivery engine starts on them at once.
    if (outcome.deliveriesCreated > 0) this.#changes.committed('deliveries')
    // The profile worker starts on them at once (other processes' workers poll).
    if (outcome.stored.includes(true)) this.#changes.committedLocally('messages')
    return outcome
  }

  async getMessage(sourceId: string, messageId: string): Promise<StoredMessage | null> {
    const row = await this.#sql.messages.latest(sourceId, messageId)
    return row ? toStoredMessage(row) : null
  }

  async recentMessages(
    sourceIds: string[],
    limit: number,
    from: number,
    to: number,
  ): Promise<StoredMessage[]> {
    if (sourceIds.length === 0 || limit <= 0) return []
    return (await this.#sql.messages.recent(sourceIds, limit, from, to)).map(toStoredMessage)
  }

  async countMessages(sourceId?: string): Promise<number> {
    return this.#sql.messages.count(sourceId)
  }

  sweep(olderThan: number): Promise<{ messages: number }> {
    return sweep(this.#sql.sweep, olderThan, this.#dedupeWindowMs)
  }
}
