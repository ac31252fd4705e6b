/**
 * Signatures end to end: messages full of non-ASCII text, emoji, control characters
 * and lone surrogates go through a real Sluice to real receivers; the `X-Signature` of every body
 * received equals the HMAC-SHA1 that the openssl CLI computes over the bytes received, under an ASCII,
 * a non-ASCII/emoji and a 1 KB secret. The receiver helper `verifySignature`, imported the way
 * docs/webhooks.md tells receivers to (`@sluice/server/verify`), accepts exactly those and rejects tampered
 * bodies, wrong secrets and malformed signatures, without throwing and with timingSafeEqual semantics.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { verifySignature } from '@sluice/server/verify'
import fc from 'fast-check'
import { opensslHmacSha1, type Receiver, startReceiver } from '../deliver/receivers.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { LONG, until } from './helpers.ts'

const GENERATED = LONG ? 1_000 : 100

const SECRETS = {
  ascii: 'whsec_0123456789abcdefABCDEF',
  unicode: 'geheimnis-ü-日本-🔑-👩‍👩‍👧',
  long: `k${'0123456789abcdef'.repeat(63)}xyz`.slice(0, 1024), // longer than SHA-1's 64-byte block
}

/** Strings that stress the path from JSON text to signed bytes. */
const TRICKY: Record<string, string> = {
  'Latin-1 and accents': 'Zürich, café, naïve, Ångström, ß',
  'CJK and RTL': '日本語のテキスト, 中文, 한국어, עברית, العربية',
  'emoji and ZWJ sequences': '🎉 👩‍👩‍👧‍👦 🏳️‍🌈 👍🏽 🇨🇭',
  'combining marks (NFD)': 'u\u0308 e\u0301 a\u030a',
  'lone high surrogate': 'bad \ud800 half',
  'lone low surrogate': 'bad \udc00 half',
  'reversed pair': '\udc00\ud800',
  'line and paragraph separators': 'a\u2028b\u2029c',
  'control characters': Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join(''),
  'quotes, backslashes, slashes': '"\\/\\\\"\'`</script>',
  BOM: '\ufeffstarts with a BOM',
  'non-characters and edges': '\uffff \ufffe \u{10ffff} \u{1f600}\u0000',
  'long text': 'Zürich 🎉 '.repeat(2000),
}

describe('X-Signature end to end', () => {
  let sluice: TestSluice
  const receivers = new Map<keyof typeof SECRETS, Receiver>()
  /** messageId -> the properties sent. */
  const sent = new Map<string, Record<string, unknown>>()

  before(async () => {
    sluice = await startTestSluice()
    const source = await sluice.createSource('Signed')
    for (const name of Object.keys(SECRETS) as Array<keyof typeof SECRETS>) {
      const receiver = await startReceiver()
      receivers.set(name, receiver)
      const created = await sluice.api('POST', '/api/v1/destinations', {
        name: `signed with the ${name} secret`,
        type: 'webhooks',
        sourceIds: [source.id],
        settings: { webhooks: [{ url: `${receiver.url}/hook` }], sharedSecret: SECRETS[name] },
      })
      assert.equal(created.status, 201, JSON.stringify(created.body))
    }
    const generated = fc.sample(
      fc.record({
        text: fc.string({ unit: 'binary', maxLength: 40 }), // any code unit, lone surrogates included
        graphemes: fc.string({ unit: 'grapheme', maxLength: 20 }),
        key: fc.string({ unit: 'binary', minLength: 1, maxLength: 10 }),
        number: fc.double({ noNaN: true, noDefaultInfinity: true }),
      }),
      { numRuns: GENERATED, seed: 42 },
    )
    const messages = [
      ...Object.entries(TRICKY).map(([name, text], i) => ({
        messageId: `tricky-${i}`,
        event: text.slice(0, 200) || 'empty',
        properties: { name, text, [text.slice(0, 30)]: text.slice(0, 30) },
      })),
      ...generated.map((g, i) => ({
        messageId: `generated-${i}`,
        event: g.graphemes.trim() === '' ? 'Generated' : g.graphemes,
        properties: { text: g.text, graphemes: g.graphemes, [g.key]: g.number },
      })),
    ]
    for (let i = 0; i < messages.length; i += 100) {
      const batch = messages.slice(i, i + 100).map((m) => ({ type: 'track', userId: 'signed-user', ...m }))
      const response = await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })
      assert.deepEqual(response.body, { success: true }, response.text)
    }
    for (const m of messages) sent.set(m.messageId, m.properties)
    for (const [name, receiver] of receivers) {
      await until(
        `every message at the ${name}-secret receiver`,
        () => receiver.requests.length,
        (n) => n >= messages.length,
        15_000,
      )
    }
  })
  after(async () => {
    await sluice?.destroy()
    for (const receiver of receivers.values()) await receiver.close()
  })

  test('each body is valid UTF-8 and carries exactly the properties sent', () => {
    for (const receiver of receivers.values()) {
      for (const { body } of receiver.requests) {
        assert.ok(Buffer.from(body.toString('utf8'), 'utf8').equals(body), 'the body is well-formed UTF-8')
        const message = JSON.parse(body.toString('utf8'))
        assert.deepEqual(
          message.properties,
          JSON.parse(JSON.stringify(sent.get(message.messageId))),
          message.messageId,
        )
      }
    }
  })

  test('X-Signature = openssl dgst -sha1 -hmac <secret> over the bytes received, for every request', () => {
    let checked = 0
    for (const [name, receiver] of receivers) {
      for (const { body, headers } of receiver.requests) {
        const signature = headers['x-signature']
        assert.equal(typeof signature, 'string', 'signed')
        assert.match(signature as string, /^[0-9a-f]{40}$/, 'lower-case hex, 40 digits')
        assert.equal(
          signature,
          opensslHmacSha1(body, SECRETS[name]),
          `${name} secret, ${body.toString('utf8').slice(0, 80)}`,
        )
        checked++
      }
    }
    assert.ok(checked >= 3 * (Object.keys(TRICKY).length + GENERATED))
  })

  test('verifySignature accepts them, and rejects tampered bodies and wrong secrets', () => {
    const others = (name: keyof typeof SECRETS) => [
      ...Object.entries(SECRETS)
        .filter(([other]) => other !== name)
        .map(([, secret]) => secret),
      `${SECRETS[name]}x`,
      SECRETS[name].slice(0, -1),
      SECRETS[name].normalize('NFD') === SECRETS[name]
        ? SECRETS[name].toUpperCase()
        : SECRETS[name].normalize('NFD'),
      '',
    ]
    for (const [name, receiver] of receivers) {
      for (const [index, { body, headers }] of receiver.requests.entries()) {
        const signature = headers['x-signature'] as string
        assert.equal(verifySignature(body, signature, SECRETS[name]), true)
        assert.equal(
          verifySignature(body, headers['x-signature'], SECRETS[name]),
          true,
          'the header value as Node gives it',
        )
        for (const wrong of others(name)) {
          assert.equal(
            verifySignature(body, signature, wrong),
            false,
            `${name}: accepted under another secret`,
          )
        }
        // Tampering: each kind of edit, at a position that moves through the body.
        const at = (index * 7919) % body.length
        const flipped = Buffer.from(body)
        flipped[at] = flipped[at]! ^ 0x01
        const tampered = [
          flipped,
          Buffer.concat([body, Buffer.from(' ')]),
          body.subarray(0, -1),
          Buffer.concat([body.subarray(0, at), body.subarray(at + 1)]),
          Buffer.from(body.toString('utf8').replace('signed-user', 'signed-usEr')),
          Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8')), null, 1)), // same JSON, other bytes
        ]
        for (const [kind, edited] of tampered.entries()) {
          assert.equal(
            verifySignature(edited, signature, SECRETS[name]),
            false,
            `${name}: tampering #${kind} not detected`,
          )
        }
      }
    }
  })
})

describe('verifySignature compares like timingSafeEqual, never throwing', () => {
  const body = Buffer.from('{"type":"track","event":"Zürich 🎉"}')
  const secret = SECRETS.unicode
  const good = opensslHmacSha1(body, secret)

  test('same length, wrong: false (first digit, last digit, every digit, non-hex)', () => {
    const flip = (hex: string, i: number) => hex.slice(0, i) + (hex[i] === '0' ? '1' : '0') + hex.slice(i + 1)
    for (const wrong of [
      flip(good, 0),
      flip(good, 39),
      flip(good, 20),
      [...good].map((_, i) => (good[i] === 'a' ? 'b' : 'a')).join(''),
      'g'.repeat(40),
      ' '.repeat(40),
    ]) {
      assert.equal(wrong.length, 40)
      assert.equal(verifySignature(body, wrong, secret), false, wrong)
    }
  })

  test('length mismatch: false, without throwing as timingSafeEqual would', () => {
    for (const wrong of [
      '',
      good.slice(0, 39),
      `${good}0`,
      good + good,
      `sha1=${good}`,
      good.slice(0, 20),
      '0',
    ]) {
      assert.doesNotThrow(() => verifySignature(body, wrong, secret))
      assert.equal(verifySignature(body, wrong, secret), false, JSON.stringify(wrong))
    }
  })

  test('missing or repeated header: false; hex case and surrounding spaces do not matter', () => {
    assert.equal(verifySignature(body, undefined, secret), false)
    assert.equal(verifySignature(body, null, secret), false)
    assert.equal(verifySignature(body, [good, good], secret), false)
    assert.equal(verifySignature(body, good.toUpperCase(), secret), true)
    assert.equal(verifySignature(body, ` ${good}\t`, secret), true)
    assert.equal(
      verifySignature(body.toString('utf8'), good, secret),
      true,
      'a string body is its UTF-8 bytes',
    )
  })

  // Any text a secret can be (openssl takes it as an argument, so no NUL).
  const secretArb = fc
    .string({ unit: 'grapheme', minLength: 1, maxLength: 20 })
    .filter((s) => !s.includes('\0'))

  test('property: a signature verifies only its own body under its own secret', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 256 }),
        fc.uint8Array({ maxLength: 256 }),
        secretArb,
        secretArb,
        (a, b, secretA, secretB) => {
          const bodyA = Buffer.from(a)
          const bodyB = Buffer.from(b)
          const signature = opensslHmacSha1(bodyA, secretA)
          assert.equal(verifySignature(bodyA, signature, secretA), true)
          assert.equal(verifySignature(bodyB, signature, secretA), bodyA.equals(bodyB))
          assert.equal(
            verifySignature(bodyA, signature, secretB),
            Buffer.from(secretA).equals(Buffer.from(secretB)),
          )
        },
      ),
      { numRuns: LONG ? 500 : 50 },
    )
  })
})
