/**
 * Delivery outcomes cross from the main thread to the store thread packed (packed-text.ts), like
 * accepted messages (packed-messages.ts): structured clone would write every property name of every
 * outcome and attempt on the busy delivery thread, and read them back on the store thread.
 *
 * Layout: the outcome count, then per outcome: deliveryId, status (index in STATUSES), deadLettered
 * (1/0), nextAttemptAt, firstAttemptAt, the closed URLs (count, then each), and the attempts (count,
 * then per attempt: attemptedAt, statusCode, latencyMs, url, errorKind, errorText, responseExcerpt).
 */
import type { DeliveryAttempt } from '../../domain/deliveries.ts'
import type { DeliveryOutcome } from '../../domain/delivery-store.ts'
import { type Packed, Packer, Unpacker } from './packed-text.ts'

const STATUSES: readonly DeliveryOutcome['status'][] = ['delivered', 'retrying', 'failed']

export function packOutcomes(outcomes: DeliveryOutcome[]): Packed {
  const out = new Packer()
  out.number(outcomes.length)
  for (const outcome of outcomes) {
    out.number(outcome.deliveryId)
    out.number(STATUSES.indexOf(outcome.status))
    out.number(outcome.deadLettered ? 1 : 0)
    out.maybe(outcome.nextAttemptAt)
    out.number(outcome.firstAttemptAt)
    out.number(outcome.closedUrls.length)
    for (const url of outcome.closedUrls) out.string(url)
    out.number(outcome.attempts.length)
    for (const attempt of outcome.attempts) {
      out.number(attempt.attemptedAt)
      out.maybe(attempt.statusCode)
      out.number(attempt.latencyMs)
      out.string(attempt.url)
      out.string(attempt.errorKind)
      out.string(attempt.errorText)
      out.string(attempt.responseExcerpt)
    }
  }
  return out.finish()
}

export function unpackOutcomes(packed: Packed): DeliveryOutcome[] {
  const input = new Unpacker(packed)
  const outcomes: DeliveryOutcome[] = new Array(input.number())
  for (let i = 0; i < outcomes.length; i++) {
    const deliveryId = input.number()
    const status = STATUSES[input.number()]!
    const deadLettered = input.number() === 1
    const nextAttemptAt = input.maybe()
    const firstAttemptAt = input.number()
    const closedUrls: string[] = new Array(input.number())
    for (let u = 0; u < closedUrls.length; u++) closedUrls[u] = input.string()!
    const attempts: DeliveryAttempt[] = new Array(input.number())
    for (let a = 0; a < attempts.length; a++) {
      attempts[a] = {
        attemptedAt: input.number(),
        statusCode: input.maybe(),
        latencyMs: input.number(),
        url: input.string()!,
        errorKind: input.string(),
        errorText: input.string(),
        responseExcerpt: input.string(),
      }
    }
    outcomes[i] = { deliveryId, attempts, status, deadLettered, nextAttemptAt, firstAttemptAt, closedUrls }
  }
  return outcomes
}
