/**
 * Which due messages of a batching destination go out together (docs/webhooks.md, "Batching"):
 * in the order they became due, as many as fit both `maxEvents` and `maxBytes` of the array body;
 * a batch that is not full waits until its oldest message has waited `maxWaitMs`. A single message
 * larger than `maxBytes` goes alone (it cannot be split), and so does one that cannot be shaped (its
 * batch then fails as an invalid message without taking others with it).
 */
import type { BatchCandidate } from '../domain/delivery-store.ts'
import type { BatchingSettings, WebhooksSettings } from '../domain/destinations.ts'
import { deliveredBody } from './fan-out.ts'

export interface BatchPlan {
  /** Delivery ids per batch to form now, oldest first. */
  groups: number[][]
  /** When the unfilled rest must go even if it stays unfilled; null when nothing is left over. */
  flushAt: number | null
}

/** How many due messages the engine reads per look: a few full batches' worth. */
export function candidateLimit(batching: BatchingSettings): number {
  return Math.min(4 * batching.maxEvents, 4_000)
}

/** The bytes a message adds to an array body: its JSON, and a comma after the first. */
function messageBytes(payload: Record<string, unknown>, settings: WebhooksSettings): number | null {
  try {
    return deliveredBody(payload, settings).length
  } catch {
    return null
  }
}

export function planBatches(
  candidates: readonly BatchCandidate[],
  batching: BatchingSettings,
  now: number,
  settings: WebhooksSettings,
): BatchPlan {
  const groups: number[][] = []
  let current: number[] = []
  let currentBytes = 2 // "[" and "]"
  let oldestDue = Number.POSITIVE_INFINITY
  const close = () => {
    if (current.length > 0) groups.push(current)
    current = []
    currentBytes = 2
    oldestDue = Number.POSITIVE_INFINITY
  }
  for (const candidate of candidates) {
    const bytes = messageBytes(candidate.payload, settings)
    if (bytes === null) {
      groups.push([candidate.id])
      continue
    }
    const added = bytes + (current.length > 0 ? 1 : 0)
    if (current.length > 0 && currentBytes + added > batching.maxBytes) close()
    current.push(candidate.id)
    currentBytes += bytes + (current.length > 1 ? 1 : 0)
    oldestDue = Math.min(oldestDue, candidate.dueAt)
    if (current.length >= batching.maxEvents || currentBytes >= batching.maxBytes) close()
  }
  if (current.length === 0) return { groups, flushAt: null }
  const flushAt = oldestDue + batching.maxWaitMs
  if (flushAt <= now) {
    close()
    return { groups, flushAt: null }
  }
  return { groups, flushAt }
}
