/**
 * Standard Webhooks signatures (standardwebhooks.com, docs/webhooks.md): `webhook-signature` is
 * `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`, keyed with the bytes a
 * `whsec_<base64>` secret encodes. Receivers verify with the `standardwebhooks` or `svix` libraries
 * unchanged; this file only signs, and generates and checks secrets.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto'

export const WHSEC_PREFIX = 'whsec_'

/** The key sizes Sluice takes: at least 24 bytes (the standard's floor); 64 is an HMAC-SHA256 block. */
export const WHSEC_BYTES = { generated: 32, min: 24, max: 64 } as const

/** A new secret: 32 random bytes, `whsec_` and standard base64 (what both libraries decode). */
export function newStandardWebhooksSecret(): string {
  return `${WHSEC_PREFIX}${randomBytes(WHSEC_BYTES.generated).toString('base64')}`
}

/** Padded standard base64, as the libraries decode it (`@stablelib/base64` refuses anything else). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/**
 * Why `value` is not a usable secret (never quoting it: the words are shown and logged), or
 * undefined when it is one.
 */
export function standardWebhooksSecretProblem(value: string): string | undefined {
  const example = 'whsec_ followed by standard base64 of 24 to 64 random bytes'
  if (!value.startsWith(WHSEC_PREFIX)) return `must start with "${WHSEC_PREFIX}": ${example}.`
  const encoded = value.slice(WHSEC_PREFIX.length)
  if (encoded === '' || !BASE64.test(encoded)) {
    return `is not base64 after "${WHSEC_PREFIX}" (letters, digits, + and /, padded with = to a multiple of 4 characters): ${example}.`
  }
  const bytes = Buffer.from(encoded, 'base64').length
  if (bytes < WHSEC_BYTES.min || bytes > WHSEC_BYTES.max) {
    return `encodes ${bytes} bytes; it must encode ${WHSEC_BYTES.min} to ${WHSEC_BYTES.max} (generate them with e.g. \`openssl rand -base64 32\`).`
  }
  return undefined
}

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
