/**
 * `X-Signature` (docs/webhooks.md): lower-case hex HMAC-SHA1 of the exact body bytes, keyed with the
 * destination's shared secret. Sluice signs with `signBody`; a receiver checks with `verifySignature`
 * (it depends on node:crypto only, so a receiver can copy it):
 *
 *   const body = await readRawBody(req)   // the bytes as received, before JSON.parse
 *   if (!verifySignature(body, req.headers['x-signature'], secret)) return reply(401)
 *
 * Verify the raw bytes: re-serializing parsed JSON can change them (spacing, escapes, key order).
 */
import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto'

/**
 * Lower-case hex HMAC-SHA1 of `body` (a string is taken as its UTF-8 bytes). `secret` may be the
 * `signingKey` of the secret, which signs the same but skips turning the string into a key each time.
 */
export function signBody(body: Buffer | Uint8Array | string, secret: string | KeyObject): string {
  return createHmac('sha1', secret).update(body).digest('hex')
}

/** Destinations are few and their secrets change rarely; the bound only matters if they keep changing. */
const MAX_CACHED_KEYS = 1_000
const signingKeys = new Map<string, KeyObject>()

/** The secret as a reusable key (its UTF-8 bytes, as `createHmac` takes a string), cached per secret. */
export function signingKey(secret: string): KeyObject {
  let key = signingKeys.get(secret)
  if (key === undefined) {
    if (signingKeys.size >= MAX_CACHED_KEYS) signingKeys.clear()
    key = createSecretKey(Buffer.from(secret, 'utf8'))
    signingKeys.set(secret, key)
  }
  return key
}

/** A SHA-1 digest in hex is always 40 characters. */
const SIGNATURE_PATTERN = /^[0-9a-f]{40}$/i

/**
 * True when `signatureHeader` is the signature of `body` under `secret`. Compares in constant time so
 * response timing does not reveal how much of a forged signature was right. Accepts a Node
 * `req.headers[...]` value directly (missing or repeated header: false). Hex case is ignored.
 */
export function verifySignature(
  body: Buffer | Uint8Array | string,
  signatureHeader: string | string[] | null | undefined,
  secret: string,
): boolean {
  if (typeof signatureHeader !== 'string') return false
  const received = signatureHeader.trim()
  // Length and alphabet are public (always 40 hex digits), so checking them first leaks nothing.
  if (!SIGNATURE_PATTERN.test(received)) return false
  const expected = Buffer.from(signBody(body, secret), 'hex')
  return timingSafeEqual(expected, Buffer.from(received, 'hex'))
}
