/**
 * What a group commit asks the SQL to do, worked out once for both backends: the messages grouped by
 * source, each source's repeats of a messageId inside the batch left out (the first occurrence stands
 * for them: a repeat is a duplicate whatever the store holds), and how many messages each source sent
 * in all, so that its duplicate counter can grow by `total - stored`.
 */
import type { AcceptedMessage } from '../store.ts'

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
