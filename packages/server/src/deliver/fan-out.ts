/**
 * One attempt of a delivery goes out: the stored message is shaped, serialized and signed once, and
 * the same bytes are POSTed to every URL still open, in parallel (a retry sends exactly what the
 * first attempt signed). What the results mean is decided in delivery-outcome.ts.
 */
import type { WebhooksSettings } from '../domain/destinations.ts'
import type { AttemptResult, WebhookSender } from './http-sender.ts'
import { serializeMessage, shapeMessage } from './shape.ts'
import { signBody, signingKey } from './signing.ts'

export interface PreparedRequest {
  /** The exact bytes sent, and signed. */
  body: Buffer
  signature: string | undefined
}

/** Shapes and serializes a stored message once; throws when it cannot be shaped. */
export function prepareRequest(
  payload: Record<string, unknown>,
  settings: WebhooksSettings,
): PreparedRequest {
  const body = serializeMessage(shapeMessage(payload))
  const secret = settings.sharedSecret
  return { body, signature: secret ? signBody(body, signingKey(secret)) : undefined }
}

/**
 * A batch's request: its members' shaped messages as one JSON array, in member order, signed over
 * the whole array. Throws when a member cannot be shaped.
 */
export function prepareBatchRequest(
  payloads: readonly Record<string, unknown>[],
  settings: WebhooksSettings,
): PreparedRequest {
  const parts: Buffer[] = [OPEN_BRACKET]
  for (const [i, payload] of payloads.entries()) {
    if (i > 0) parts.push(COMMA)
    parts.push(serializeMessage(shapeMessage(payload)))
  }
  parts.push(CLOSE_BRACKET)
  const body = Buffer.concat(parts)
  const secret = settings.sharedSecret
  return { body, signature: secret ? signBody(body, signingKey(secret)) : undefined }
}

const OPEN_BRACKET = Buffer.from('[')
const COMMA = Buffer.from(',')
const CLOSE_BRACKET = Buffer.from(']')

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
