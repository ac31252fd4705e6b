/**
 * The signature headers of one attempt (docs/webhooks.md), from the destination's `signing` settings,
 * its secrets, and the secrets a rotation replaced that are still in their grace period:
 *
 * - `X-Signature`: hex HMAC-SHA1 of the body with the shared secret, when one is set and
 *   `signing.xSignature` (default on). During a rotation's grace it keeps the old secret, so receivers
 *   that check it go on working, and `X-Signature-Next` carries the new one.
 * - With `signing.standardWebhooks`: `webhook-id` (stable across retries), `webhook-timestamp` (this
 *   attempt, Unix seconds) and `webhook-signature`: `v1,<new>`, then `v1,<old>` during a grace.
 *
 * The grace is judged at each attempt against the clock, so it ends without anything being rewritten.
 */
import { DEFAULT_SIGNING, type SecretKind, type WebhooksSettings } from '../domain/destinations.ts'
import { hmacSha1Hex } from './hmac-sha1.ts'
import { standardWebhooksSignature } from './standard-webhooks.ts'

/** Each header's name as it is shown (delivery-request.ts), by its name on the wire (lower case, as always sent). */
export const SHOWN_SIGNATURE_HEADER_NAMES: Readonly<Record<string, string>> = {
  'x-signature': 'X-Signature',
  'x-signature-next': 'X-Signature-Next',
}

/** The secret a rotation replaced, while its grace lasts at `now`. */
function previousSecret(settings: WebhooksSettings, kind: SecretKind, now: number): string | undefined {
  const previous = settings.rotation?.previous[kind]
  return previous !== undefined && now < previous.until ? previous.secret : undefined
}

/**
 * The headers as a flat name/value list (undici's form); empty when the destination signs nothing.
 * `webhookId` may be given as a function: it is then worked out only when Standard Webhooks signs.
 */
export function signatureHeaders(
  body: Buffer,
  settings: WebhooksSettings,
  webhookId: string | (() => string),
  now: number,
): string[] {
  const signing = settings.signing ?? DEFAULT_SIGNING
  const headers: string[] = []
  const shared = settings.sharedSecret
  if (signing.xSignature && shared) {
    const old = previousSecret(settings, 'sharedSecret', now)
    if (old === undefined) headers.push('x-signature', hmacSha1Hex(body, shared))
    else {
      headers.push('x-signature', hmacSha1Hex(body, old))
      headers.push('x-signature-next', hmacSha1Hex(body, shared))
    }
  }
  const whsec = settings.standardWebhooksSecret
  if (signing.standardWebhooks && whsec) {
    const timestamp = Math.floor(now / 1000)
    const id = typeof webhookId === 'string' ? webhookId : webhookId()
    const signatures = [standardWebhooksSignature(whsec, id, timestamp, body)]
    const old = previousSecret(settings, 'standardWebhooks', now)
    if (old !== undefined) signatures.push(standardWebhooksSignature(old, id, timestamp, body))
    headers.push('webhook-id', id, 'webhook-timestamp', String(timestamp))
    headers.push('webhook-signature', signatures.join(' '))
  }
  return headers
}
