/**
 * Standard Webhooks secrets (standardwebhooks.com): `whsec_` and the standard base64 of the key bytes,
 * made and checked here (destinations' settings, their rotations and the alert URL's secret use it;
 * deliver/standard-webhooks.ts signs).
 */
import { randomBytes } from 'node:crypto'

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
