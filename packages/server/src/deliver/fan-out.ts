/**
 * One attempt of a delivery goes out: the stored message is shaped, serialized and signed once, and
 * the same bytes are POSTed to every URL still open, in parallel (a retry sends exactly what the
 * first attempt signed). What the results mean is decided in delivery-outcome.ts.
 */
import type { WebhookMethod, WebhooksSettings } from '../domain/destinations.ts'
import { applyMapping } from '../lib/mapping-language.ts'
import { editedCall } from '../route/gates.ts'
import type { AttemptResult, SendRequest, WebhookSender } from './http-sender.ts'
import { serializeMessage, shapeMessage } from './shape.ts'
import { signatureHeaders } from './signature-headers.ts'
import { batchWebhookId, messageWebhookId } from './standard-webhooks.ts'

export interface PreparedRequest {
  /** The exact bytes sent, and signed. */
  body: Buffer
  /** This attempt's signature headers, as a flat name/value list (signature-headers.ts). */
  signatureHeaders: string[]
  method: WebhookMethod
}

/**
 * The body a destination gets for a stored message: the call as its field rules leave it, then its
 * mapping's result, or the documented shape when it has no mapping. Throws when the message cannot be
 * shaped or the mapping fails on it (the delivery engine then fails that delivery alone, with the reason).
 */
export function deliveredBody(payload: Record<string, unknown>, settings: WebhooksSettings): Buffer {
  const call = editedCall(settings, payload)
  if (settings.mapping === undefined) return serializeMessage(shapeMessage(call))
  return Buffer.from(JSON.stringify(applyMapping(settings.mapping, call)), 'utf8')
}

/**
 * `deliveredBody` as JSON text: what a batch's members are kept as until their array is encoded once,
 * instead of a buffer each copied again into the array's.
 */
export function deliveredText(payload: Record<string, unknown>, settings: WebhooksSettings): string {
  const call = editedCall(settings, payload)
  return JSON.stringify(
    settings.mapping === undefined ? shapeMessage(call) : applyMapping(settings.mapping, call),
  )
}

/**
 * Shapes (or maps), serializes and signs a stored message for an attempt at `now`; throws when that
 * fails. Its `webhook-id` is its messageId; a `delete` notification, stored without one, is known by a
 * digest of its body, as stable across retries.
 */
export function prepareRequest(
  payload: Record<string, unknown>,
  settings: WebhooksSettings,
  now = Date.now(),
): PreparedRequest {
  const body = deliveredBody(payload, settings)
  // Worked out only when Standard Webhooks signs: a destination without it pays nothing for it.
  const webhookId = () =>
    messageWebhookId(typeof payload.messageId === 'string' ? payload.messageId : body.toString('utf8'))
  return {
    body,
    signatureHeaders: signatureHeaders(body, settings, webhookId, now),
    method: settings.method ?? 'POST',
  }
}

/**
 * A batch's request: its members' bodies (each shaped, or mapped, as it would go alone) as one JSON
 * array, in member order, signed over the whole array, with the destination's method. Throws when a
 * member cannot be shaped or mapped.
 */
export function prepareBatchRequest(
  payloads: readonly Record<string, unknown>[],
  settings: WebhooksSettings,
  batchId: number,
  now = Date.now(),
): PreparedRequest {
  return prepareBodiesRequest(
    payloads.map((payload) => deliveredText(payload, settings)),
    settings,
    batchId,
    now,
  )
}

/** `prepareBatchRequest` from its members' bodies as text, already shaped (or mapped) in member order. */
export function prepareBodiesRequest(
  bodies: readonly string[],
  settings: WebhooksSettings,
  batchId: number,
  now = Date.now(),
): PreparedRequest {
  const body = Buffer.from(`[${bodies.join(',')}]`, 'utf8')
  return {
    body,
    signatureHeaders: signatureHeaders(body, settings, batchWebhookId(batchId), now),
    method: settings.method ?? 'POST',
  }
}

/**
 * POSTs to each of the destination's URLs in `sendable` (every URL when not given), in parallel; one
 * result per URL, in the settings' order. A replay's requests say so.
 */
export async function sendToUrls(
  sender: WebhookSender,
  settings: WebhooksSettings,
  request: PreparedRequest,
  sendable?: readonly string[],
  replayId: string | null = null,
): Promise<AttemptResult[]> {
  const { webhooks } = settings
  // The usual destination, one URL that can take the request: its one request, with no list of
  // URLs or Promise.all (this runs for every delivery).
  if (webhooks.length === 1 && (sendable === undefined || sendable.length === 1))
    return [await sender.send(sendRequest(webhooks[0]!, request, replayId))]
  const open = sendable === undefined ? webhooks : webhooks.filter(({ url }) => sendable.includes(url))
  return Promise.all(open.map((webhook) => sender.send(sendRequest(webhook, request, replayId))))
}

/** The request to one of a destination's URLs. A replay's requests say so. */
function sendRequest(
  webhook: WebhooksSettings['webhooks'][number],
  request: PreparedRequest,
  replayId: string | null,
): SendRequest {
  const sent: SendRequest = {
    url: webhook.url,
    headers: webhook.headers,
    body: request.body,
    signatureHeaders: request.signatureHeaders,
    method: request.method,
  }
  if (replayId !== null) sent.replayId = replayId
  return sent
}
