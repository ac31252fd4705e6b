/**
 * The signature headers' rules on their own (the end-to-end tests are in standard-webhooks.test.ts):
 * which headers go with which settings, a rotation's grace judged at each attempt, the webhook-id of a
 * message whose id is not a safe header value and of a `delete` notification, rotations in a row, and a
 * secret set directly ending a grace. Signatures are checked with the `standardwebhooks` library.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { prepareRequest } from '../../src/deliver/fan-out.ts'
import { signatureHeaders } from '../../src/deliver/signature-headers.ts'
import { signBody } from '../../src/deliver/signing.ts'
import { messageWebhookId } from '../../src/deliver/standard-webhooks.ts'
import type { WebhooksSettings } from '../../src/domain/destinations.ts'
import { rotateSecret } from '../../src/domain/secret-rotation.ts'
import { validateWebhooksSettings } from '../../src/domain/webhook-settings.ts'
import { newStandardWebhooksSecret } from '../../src/lib/standard-webhooks-secret.ts'

const body = Buffer.from('{"type":"track","event":"Signed Up"}')
const base: WebhooksSettings = {
  webhooks: [{ url: 'https://example.com/in', headers: {} }],
  sharedSecret: null,
}

/** The flat list as an object of header name to value. */
const asObject = (list: string[]) =>
  Object.fromEntries(list.flatMap((_, i) => (i % 2 === 0 ? [[list[i]!, list[i + 1]!]] : [])))

function verifies(
  secret: string,
  headers: Record<string, string>,
  now: number,
  signed: Buffer = body,
): boolean {
  try {
    // The library checks the timestamp against its own clock: sign at "now".
    assert.ok(Math.abs(now - Date.now()) < 60_000)
    new Webhook(secret).verify(signed.toString(), headers)
    return true
  } catch {
    return false
  }
}

describe('signature headers', () => {
  test('nothing set: none; a shared secret alone: X-Signature exactly as before', () => {
    assert.deepEqual(signatureHeaders(body, base, 'm1', Date.now()), [])
    const signed = signatureHeaders(body, { ...base, sharedSecret: 's3cret' }, 'm1', Date.now())
    assert.deepEqual(signed, ['x-signature', signBody(body, 's3cret')])
  })

  test('xSignature off drops X-Signature; Standard Webhooks without a secret signs nothing', () => {
    const off = { ...base, sharedSecret: 's', signing: { xSignature: false, standardWebhooks: true } }
    assert.deepEqual(signatureHeaders(body, off, 'm1', Date.now()), [])
  })

  test('a grace: both signatures until it ends, judged at each attempt', () => {
    const now = Date.now()
    const oldSecret = newStandardWebhooksSecret()
    const settings = {
      ...validateWebhooksSettings({ ...base, signing: { standardWebhooks: true } }),
      standardWebhooksSecret: oldSecret,
    }
    const { settings: rotated, secret } = rotateSecret(
      settings,
      { kind: 'standardWebhooks', gracePeriodSeconds: 60 },
      now,
    )
    const during = asObject(signatureHeaders(body, rotated, 'm1', now))
    assert.equal(during['webhook-signature']!.split(' ').length, 2)
    assert.ok(verifies(secret, during, now) && verifies(oldSecret, during, now))
    const afterwards = asObject(signatureHeaders(body, rotated, 'm1', now + 60_000))
    assert.equal(afterwards['webhook-signature']!.split(' ').length, 1)
    assert.equal(afterwards['webhook-timestamp'], String(Math.floor((now + 60_000) / 1000)))
  })

  test('a shared secret in its grace: X-Signature old, X-Signature-Next new', () => {
    const now = Date.now()
    const { settings } = rotateSecret(
      { ...base, sharedSecret: 'old' },
      { kind: 'sharedSecret', secret: 'new', gracePeriodSeconds: 10 },
      now,
    )
    assert.deepEqual(asObject(signatureHeaders(body, settings, 'm', now)), {
      'x-signature': signBody(body, 'old'),
      'x-signature-next': signBody(body, 'new'),
    })
    assert.deepEqual(asObject(signatureHeaders(body, settings, 'm', now + 10_000)), {
      'x-signature': signBody(body, 'new'),
    })
  })

  test('rotating during a grace keeps only the newest two secrets', () => {
    const now = Date.now()
    const first = { ...base, sharedSecret: 'one' }
    const second = rotateSecret(first, { kind: 'sharedSecret', secret: 'two' }, now).settings
    const third = rotateSecret(second, { kind: 'sharedSecret', secret: 'three' }, now + 1).settings
    assert.deepEqual(third.rotation?.previous.sharedSecret?.secret, 'two')
    assert.equal(third.rotation?.rotations.length, 2)
  })

  test('setting a secret directly ends its grace; other changes keep it, and the list of rotations', () => {
    const now = Date.now()
    const rotated = rotateSecret(
      { ...base, sharedSecret: 'old' },
      { kind: 'sharedSecret', secret: 'new' },
      now,
    )
    const kept = validateWebhooksSettings({ method: 'PUT' }, rotated.settings)
    assert.equal(kept.rotation?.previous.sharedSecret?.secret, 'old')
    const replaced = validateWebhooksSettings({ sharedSecret: 'newer' }, rotated.settings)
    assert.equal(replaced.rotation?.previous.sharedSecret, undefined)
    assert.equal(replaced.rotation?.rotations.length, 1)
  })

  test('webhook-id: the messageId when safe; otherwise msg_ and its digest, the same every time', () => {
    assert.equal(messageWebhookId('ajs-next-1700000000000-9b2c'), 'ajs-next-1700000000000-9b2c')
    for (const unsafe of ['order.1', 'café', 'with space', 'x'.repeat(256)]) {
      const id = messageWebhookId(unsafe)
      assert.match(id, /^msg_[A-Za-z0-9_-]{43}$/, unsafe)
      assert.equal(messageWebhookId(unsafe), id)
    }
  })

  test('a delete notification (no messageId) is known by its body: the same id on every attempt', () => {
    const settings = validateWebhooksSettings({ ...base, signing: { standardWebhooks: true } })
    const payload = { type: 'delete', userId: 'u1', timestamp: '2026-01-31T12:00:00.000Z' }
    const prepared = prepareRequest(payload, settings, Date.now())
    const first = asObject(prepared.signatureHeaders)
    const again = asObject(prepareRequest(payload, settings, Date.now() + 5_000).signatureHeaders)
    assert.match(first['webhook-id']!, /^msg_/)
    assert.equal(again['webhook-id'], first['webhook-id'])
    assert.ok(verifies(settings.standardWebhooksSecret!, first, Date.now(), prepared.body))
  })
})
