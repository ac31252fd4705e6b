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
