/**
 * Standard Webhooks signatures (standardwebhooks.com, docs/webhooks.md): `webhook-signature` is
 * `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`, keyed with the bytes a
 * `whsec_<base64>` secret encodes. Receivers verify with the `standardwebhooks` or `svix` libraries
 * unchanged. The secrets' format is lib/standard-webhooks-secret.ts.
 */
import { createHash, createHmac } from 'node:crypto'
import { WHSEC_PREFIX } from '../lib/standard-webhooks-secret.ts'

/** The key bytes of a checked secret (cached: destinations' secrets change rarely). */
const keys = new Map<string, Buffer>()
function keyOf(secret: string): Buffer {
  let key = keys.get(secret)
  if (key === undefined) {
    if (keys.size >= 1_000) keys.clear()
    key = Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64')
    keys.set(secret, key)
  }
  return key
}

/** One `v1,<base64>` signature of `body` sent as message `webhookId` at `timestampSeconds`. */
export function standardWebhooksSignature(
  secret: string,
  webhookId: string,
  timestampSeconds: number,
  body: Buffer,
): string {
  const hmac = createHmac('sha256', keyOf(secret))
  hmac.update(`${webhookId}.${timestampSeconds}.`)
  hmac.update(body)
  return `v1,${hmac.digest('base64')}`
}

/**
 * A message's `webhook-id`: its messageId when that is a safe header value without `.` (the signed
 * content is split on dots), else `msg_` and a digest of it, stable across retries all the same.
 */
export function messageWebhookId(messageId: string): string {
  if (/^[\x21-\x2d\x2f-\x7e]{1,255}$/.test(messageId)) return messageId
  return `msg_${createHash('sha256').update(messageId, 'utf8').digest('base64url')}`
}

/** A batch's `webhook-id`. */
export function batchWebhookId(batchId: number): string {
  return `batch_${batchId}`
}
