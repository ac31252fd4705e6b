/**
 * One attempt of one delivery, and what it means (SPEC §4 multi-endpoint rule):
 * - An attempt POSTs the same signed bytes to every URL still pending, at once.
 * - Any 2xx: the message is processed; no URL is tried again.
 * - A final answer (other 4xx, 3xx, TLS, SSRF) closes that URL; when every URL is closed the
 *   delivery has failed.
 * - Otherwise the open URLs are retried together on the retry policy's schedule, until the window
 *   ends and the delivery is dead-lettered.
 */
import type { ClaimedDelivery, DeliveryAttempt, DeliveryOutcome, WebhooksSettings } from '../store/store.ts'
import type { AttemptResult, WebhookSender } from './http-sender.ts'
import { nextAttempt, type RetrySettings } from './retry-policy.ts'
import { serializeMessage, shapeMessage } from './shape.ts'
import { signBody, signingKey } from './signing.ts'

export interface PreparedRequest {
  /** The exact bytes sent, and signed. */
  body: Buffer
  signature: string | undefined
}

/** Shapes and serializes a stored message once; the same bytes go to every URL and every retry. */
export function prepareRequest(
  payload: Record<string, unknown>,
  settings: WebhooksSettings,
): PreparedRequest {
  const body = serializeMessage(shapeMessage(payload))
  const secret = settings.sharedSecret
  return { body, signature: secret ? signBody(body, signingKey(secret)) : undefined }
}

/** POSTs to every configured URL not in `closedUrls`, in parallel; one result per URL. */
export function sendToOpenUrls(
  sender: WebhookSender,
  settings: WebhooksSettings,
  request: PreparedRequest,
  closedUrls: readonly string[],
): Promise<AttemptResult[]> {
  const open = settings.webhooks.filter((webhook) => !closedUrls.includes(webhook.url))
  return Promise.all(
    open.map((webhook) =>
      sender.send({
        url: webhook.url,
        headers: webhook.headers,
        body: request.body,
        signature: request.signature,
      }),
    ),
  )
}

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

/** The delivery's next state after an attempt whose per-URL results are `results`. */
export function decideOutcome(
  claimed: Pick<ClaimedDelivery, 'id' | 'attemptCount' | 'firstAttemptAt' | 'closedUrls'>,
  settings: WebhooksSettings,
  results: AttemptResult[],
  now: number,
  retry: RetrySettings,
): DeliveryOutcome {
  const firstAttemptAt = claimed.firstAttemptAt ?? Math.min(now, ...results.map((r) => r.attemptedAt))
  const attempts = results.map(toAttemptRecord)
  const base = { deliveryId: claimed.id, attempts, firstAttemptAt }
  if (results.some((r) => r.outcome === 'success')) {
    return {
      ...base,
      status: 'delivered',
      deadLettered: false,
      nextAttemptAt: null,
      closedUrls: claimed.closedUrls,
    }
  }
  const closedUrls = [
    ...claimed.closedUrls,
    ...results.filter((r) => r.outcome === 'final').map((r) => r.url),
  ]
  const stillOpen = settings.webhooks.some((webhook) => !closedUrls.includes(webhook.url))
  if (!stillOpen) {
    return { ...base, status: 'failed', deadLettered: false, nextAttemptAt: null, closedUrls }
  }
  const retryAfterMs = Math.max(0, ...results.map((r) => r.retryAfterMs ?? 0))
  const decision = nextAttempt(
    { firstAttemptAt, attemptsMade: claimed.attemptCount + 1, now, retryAfterMs: retryAfterMs || undefined },
    retry,
  )
  if (decision.action === 'dead-letter') {
    return { ...base, status: 'failed', deadLettered: true, nextAttemptAt: null, closedUrls }
  }
  return { ...base, status: 'retrying', deadLettered: false, nextAttemptAt: decision.at, closedUrls }
}
