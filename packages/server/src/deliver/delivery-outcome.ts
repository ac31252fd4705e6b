/**
 * A delivery's next state after an attempt, by the multi-endpoint rule (docs/webhooks.md):
 *
 * - An attempt POSTs the same signed bytes to every URL still open, at once (fan-out.ts).
 * - Any 2xx: the message is delivered; no URL is tried again.
 * - A final answer (see retry-policy.ts) closes that URL; when every URL is closed the delivery has
 *   failed.
 * - Otherwise the open URLs are retried together on the retry policy's schedule, until the window
 *   ends and the delivery is dead-lettered.
 */
import type { DeliveryAttempt } from '../domain/deliveries.ts'
import type { ClaimedDelivery, DeliveryOutcome } from '../domain/delivery-store.ts'
import type { WebhooksSettings } from '../domain/destinations.ts'
import { describeInvalidMessage } from './error-kinds.ts'
import type { AttemptResult } from './http-sender.ts'
import { type AttemptVerdict, classifyAttempt, nextAttempt, type RetrySettings } from './retry-policy.ts'

export interface DecidedOutcome {
  /** What the store records. */
  outcome: DeliveryOutcome
  /** Why the delivery was dead-lettered, for the operator's log; absent unless it was. */
  deadLetterReason?: string
}

type ClaimedState = Pick<ClaimedDelivery, 'id' | 'attemptCount' | 'firstAttemptAt' | 'closedUrls'>

/** The delivery's next state after an attempt whose per-URL results are `results`. */
export function decideOutcome(
  claimed: ClaimedState,
  settings: WebhooksSettings,
  results: AttemptResult[],
  now: number,
  retry: RetrySettings,
): DecidedOutcome {
  // One pass, no intermediate arrays: this runs for every attempt, and it is nearly always one success.
  const verdicts: AttemptVerdict[] = []
  const attempts: DeliveryAttempt[] = []
  let earliest = now
  let succeeded = false
  for (const result of results) {
    const verdict = classifyAttempt(result)
    if (verdict === 'success') succeeded = true
    verdicts.push(verdict)
    attempts.push(toAttemptRecord(result))
    if (result.attemptedAt < earliest) earliest = result.attemptedAt
  }
  const firstAttemptAt = claimed.firstAttemptAt ?? earliest
  if (succeeded) {
    return {
      outcome: {
        deliveryId: claimed.id,
        attempts,
        firstAttemptAt,
        status: 'delivered',
        deadLettered: false,
        nextAttemptAt: null,
        closedUrls: claimed.closedUrls,
      },
    }
  }
  const base = { deliveryId: claimed.id, attempts, firstAttemptAt }
  const closedUrls = [
    ...claimed.closedUrls,
    ...results.filter((_, i) => verdicts[i] === 'final').map((r) => r.url),
  ]
  const stillOpen = settings.webhooks.some((webhook) => !closedUrls.includes(webhook.url))
  if (!stillOpen) {
    return { outcome: { ...base, status: 'failed', deadLettered: false, nextAttemptAt: null, closedUrls } }
  }
  // The open URLs are retried together, so the longest Retry-After among them is the one honoured.
  const retryAfterMs = Math.max(
    0,
    ...results.map((r, i) => (verdicts[i] === 'retryable' ? (r.retryAfterMs ?? 0) : 0)),
  )
  const decision = nextAttempt(
    { firstAttemptAt, attemptsMade: claimed.attemptCount + 1, now, retryAfterMs: retryAfterMs || undefined },
    retry,
  )
  if (decision.action === 'dead-letter') {
    return {
      outcome: { ...base, status: 'failed', deadLettered: true, nextAttemptAt: null, closedUrls },
      deadLetterReason: decision.reason,
    }
  }
  return {
    outcome: { ...base, status: 'retrying', deadLettered: false, nextAttemptAt: decision.at, closedUrls },
  }
}

/**
 * A stored message that cannot be shaped will never succeed: the delivery fails at once, with one
 * attempt record that says why, rather than being retried until the window ends.
 */
export function invalidMessageOutcome(
  claimed: ClaimedState,
  settings: WebhooksSettings,
  error: unknown,
  now: number,
): DeliveryOutcome {
  const { kind, text } = describeInvalidMessage(error)
  return {
    deliveryId: claimed.id,
    attempts: [
      {
        attemptedAt: now,
        url: settings.webhooks[0]?.url ?? '',
        statusCode: null,
        errorKind: kind,
        errorText: text,
        latencyMs: 0,
        responseExcerpt: null,
      },
    ],
    status: 'failed',
    deadLettered: false,
    nextAttemptAt: null,
    firstAttemptAt: claimed.firstAttemptAt ?? now,
    closedUrls: claimed.closedUrls,
  }
}

/** A request's result as the attempt record the store keeps. */
export function toAttemptRecord(result: AttemptResult): DeliveryAttempt {
  return {
    attemptedAt: result.attemptedAt,
    url: result.url,
    statusCode: result.statusCode ?? null,
    errorKind: result.errorKind ?? null,
    errorText: result.errorText ?? null,
    latencyMs: Math.round(result.latencyMs),
    responseExcerpt: result.responseExcerpt || null,
  }
}
