/**
 * Which due messages of a batching destination go out together (docs/webhooks.md, "Batching"):
 * in the order they became due, as many as fit both `maxEvents` and `maxBytes` of the array body;
 * a batch that is not full waits until its oldest message has waited `maxWaitMs`. A single message
 * larger than `maxBytes` goes alone (it cannot be split), and so does one that cannot be shaped (its
 * batch then fails as an invalid message without taking others with it). A batch holds either live
 * messages or one replay's (its requests carry that replay's id), never a mix.
 */
import type { BatchCandidate, ClaimedBatch, ClaimedDelivery, FormedBatch } from '../domain/delivery-store.ts'
import type { BatchingSettings, WebhooksSettings } from '../domain/destinations.ts'
import { deliveredText, type PreparedRequest, prepareBatchRequest, prepareBodiesRequest } from './fan-out.ts'

export interface BatchPlan {
  /** Delivery ids per batch to form now, oldest first. */
  groups: number[][]
  /** When the unfilled rest must go even if it stays unfilled; null when nothing is left over. */
  flushAt: number | null
  /** The body of each message measured, as text, by delivery id (none for one that cannot be shaped). */
  bodies: Map<number, string>
}

/**
 * A batch formed and claimed by this process at once, with its members' bodies as they were shaped
 * to measure them: its first attempt sends those instead of shaping every member again.
 */
export interface ShapedBatch extends ClaimedBatch {
  /** The settings the bodies were shaped with: they are sent only while the destination has these. */
  shapedWith: WebhooksSettings
  bodies: Map<number, string>
}

/**
 * How many due messages the engine reads per look: enough for the batches it has room to claim, at
 * least one full batch, and no more than a few thousand.
 */
export function candidateLimit(batching: BatchingSettings, batches: number): number {
  return Math.max(batching.maxEvents, Math.min(batches * batching.maxEvents, 4_000))
}

/** A message's body as text, or null when it cannot be shaped. */
function bodyOf(payload: Record<string, unknown>, settings: WebhooksSettings): string | null {
  try {
    return deliveredText(payload, settings)
  } catch {
    return null
  }
}

/** The batches `formClaimedBatches` made from planned candidates, ready to send with the planned bodies. */
export function shapedBatches(
  formed: readonly FormedBatch[],
  candidates: readonly BatchCandidate[],
  plan: BatchPlan,
  settings: WebhooksSettings,
): ShapedBatch[] {
  const byId = new Map(candidates.map((candidate) => [candidate.id, candidate]))
  return formed.map(({ id, memberIds }) => ({
    id,
    destinationId: candidates[0]!.destinationId,
    attemptCount: 0,
    firstAttemptAt: null,
    closedUrls: [],
    members: memberIds.map((memberId) => byId.get(memberId)!),
    shapedWith: settings,
    bodies: plan.bodies,
  }))
}

/**
 * The request of a claimed batch for these of its members (in member order): from the bodies shaped
 * when it was formed when the destination's settings are still those, else shaped now. Throws when a
 * member cannot be shaped.
 */
export function batchRequest(
  batch: ClaimedBatch | ShapedBatch,
  members: readonly ClaimedDelivery[],
  settings: WebhooksSettings,
): PreparedRequest {
  if (!('bodies' in batch) || batch.shapedWith !== settings)
    return prepareBatchRequest(
      members.map((member) => member.payload),
      settings,
      batch.id,
    )
  return prepareBodiesRequest(
    members.map((member) => batch.bodies.get(member.id) ?? deliveredText(member.payload, settings)),
    settings,
    batch.id,
  )
}

export function planBatches(
  candidates: readonly BatchCandidate[],
  batching: BatchingSettings,
  now: number,
  settings: WebhooksSettings,
): BatchPlan {
  const groups: number[][] = []
  const bodies = new Map<number, string>()
  let current: number[] = []
  let currentBytes = 2 // "[" and "]"
  let oldestDue = Number.POSITIVE_INFINITY
  let currentReplay: string | null = null
  const close = () => {
    if (current.length > 0) groups.push(current)
    current = []
    currentBytes = 2
    oldestDue = Number.POSITIVE_INFINITY
  }
  for (const candidate of candidates) {
    const body = bodyOf(candidate.payload, settings)
    if (body === null) {
      groups.push([candidate.id])
      continue
    }
    bodies.set(candidate.id, body)
    const bytes = Buffer.byteLength(body, 'utf8')
    const added = bytes + (current.length > 0 ? 1 : 0)
    if (
      current.length > 0 &&
      (currentBytes + added > batching.maxBytes || candidate.replayId !== currentReplay)
    )
      close()
    currentReplay = candidate.replayId
    current.push(candidate.id)
    currentBytes += bytes + (current.length > 1 ? 1 : 0)
    oldestDue = Math.min(oldestDue, candidate.dueAt)
    if (current.length >= batching.maxEvents || currentBytes >= batching.maxBytes) close()
  }
  if (current.length === 0) return { groups, flushAt: null, bodies }
  const flushAt = oldestDue + batching.maxWaitMs
  if (flushAt <= now) {
    close()
    return { groups, flushAt: null, bodies }
  }
  return { groups, flushAt, bodies }
}
