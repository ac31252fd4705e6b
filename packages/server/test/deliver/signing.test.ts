import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { serializeMessage, shapeMessage } from '../../src/deliver/shape.ts'
import { signBody, signingKey, verifySignature } from '../../src/deliver/signing.ts'
import { opensslHmacSha1 } from './receivers.ts'

const bodies: Array<[string, Buffer]> = [
  ['ASCII JSON', Buffer.from('{"version":1,"type":"track","event":"Signed Up"}')],
  ['non-ASCII', Buffer.from('{"userId":"jürgen","event":"Café crème"}', 'utf8')],
  ['emoji and CJK', Buffer.from('{"note":"日本語 🎉👩‍👩‍👧"}', 'utf8')],
  ['empty', Buffer.alloc(0)],
  ['binary-ish bytes', Buffer.from([0x00, 0xff, 0x0a, 0x0d, 0x80])],
]

describe('signBody matches an independent HMAC-SHA1 (openssl dgst)', () => {
  for (const [name, body] of bodies) {
    for (const secret of ['whsec_simple', 'geheimnis-ü-🔑']) {
      test(`${name}, secret ${JSON.stringify(secret)}`, () => {
        const signature = signBody(body, secret)
        assert.match(signature, /^[0-9a-f]{40}$/, 'lower-case hex, 40 digits')
        assert.equal(signature, opensslHmacSha1(body, secret))
        assert.equal(signBody(body, signingKey(secret)), signature, 'the cached key signs the same')
      })
    }
  }

  test('signingKey: one key per secret, reused; secrets longer than a SHA-1 block sign correctly', () => {
    assert.equal(signingKey('whsec_simple'), signingKey('whsec_simple'))
    assert.notEqual(signingKey('whsec_simple'), signingKey('whsec_other'))
    const long = 'k'.repeat(100) // HMAC hashes keys over 64 bytes first
    const body = Buffer.from('{"type":"track"}')
    assert.equal(signBody(body, signingKey(long)), opensslHmacSha1(body, long))
  })

  test('a string body is signed as its UTF-8 bytes', () => {
    const text = '{"event":"Ünïcödé 🎉"}'
    assert.equal(signBody(text, 'k'), opensslHmacSha1(Buffer.from(text, 'utf8'), 'k'))
  })

  test('a shaped, serialized message: the signature covers the exact bytes sent', () => {
    const body = serializeMessage(
      shapeMessage({
        type: 'track',
        userId: 'u1',
        event: 'Bought 🎉',
        properties: { city: 'Zürich' },
        messageId: 'm1',
        timestamp: '2026-01-31T12:00:00Z',
      }),
    )
    assert.equal(signBody(body, 's3cret'), opensslHmacSha1(body, 's3cret'))
  })
})

describe('verifySignature', () => {
  const body = Buffer.from('{"type":"identify","userId":"ü🎉"}', 'utf8')
  const secret = 'shared-secret'
  const good = opensslHmacSha1(body, secret)

  test('accepts the right signature (also as a string body, upper case, or with surrounding spaces)', () => {
    assert.equal(verifySignature(body, good, secret), true)
    assert.equal(verifySignature(body.toString('utf8'), good, secret), true)
    assert.equal(verifySignature(body, good.toUpperCase(), secret), true)
    assert.equal(verifySignature(body, ` ${good} `, secret), true)
  })

  test('rejects a tampered body', () => {
    const tampered = Buffer.from(body)
    const index = tampered.length - 2
    tampered.writeUInt8(tampered.readUInt8(index) ^ 1, index)
    assert.equal(verifySignature(tampered, good, secret), false)
    assert.equal(verifySignature(Buffer.concat([body, Buffer.from(' ')]), good, secret), false)
  })

  test('rejects the wrong secret', () => {
    assert.equal(verifySignature(body, good, 'other-secret'), false)
  })

  test('rejects a wrong-length, non-hex, missing or repeated header without throwing', () => {
    assert.equal(verifySignature(body, good.slice(0, 39), secret), false)
    assert.equal(verifySignature(body, `${good}0`, secret), false)
    assert.equal(verifySignature(body, `${good.slice(0, 39)}g`, secret), false)
    assert.equal(verifySignature(body, '', secret), false)
    assert.equal(verifySignature(body, undefined, secret), false)
    assert.equal(verifySignature(body, null, secret), false)
    assert.equal(verifySignature(body, [good, good], secret), false)
    assert.equal(verifySignature(body, `sha1=${good}`, secret), false)
  })

  test('rejects a signature of a different body', () => {
    assert.equal(verifySignature(body, opensslHmacSha1('{}', secret), secret), false)
  })
})
