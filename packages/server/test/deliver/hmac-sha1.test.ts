import assert from 'node:assert/strict'
import { createHmac, randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import { hmacSha1Hex } from '../../src/deliver/hmac-sha1.ts'
import { opensslHmacSha1 } from './receivers.ts'

const reference = (body: Buffer, secret: string) => createHmac('sha1', secret).update(body).digest('hex')

describe('hmacSha1Hex gives what createHmac gives', () => {
  // Keys shorter than, exactly, and longer than a SHA-1 block (64 bytes, hashed first), and not ASCII.
  const secrets = [
    '',
    'k',
    'bench-secret',
    'geheimnis-ü-🔑',
    'x'.repeat(63),
    'x'.repeat(64),
    'y'.repeat(65),
    'z'.repeat(200),
  ]

  test('every key length, bodies around the block boundaries, empty and binary', () => {
    for (const secret of secrets) {
      for (const length of [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 300, 1023, 1024, 5000]) {
        const body = randomBytes(length)
        assert.equal(
          hmacSha1Hex(body, secret),
          reference(body, secret),
          `secret ${secret.length}, body ${length}`,
        )
      }
    }
  })

  test('calls in turn with different secrets and sizes do not leak into each other', () => {
    const cases = Array.from({ length: 200 }, (_, i) => ({
      body: randomBytes((i * 37) % 3000),
      secret: secrets[i % secrets.length]!,
    }))
    for (const { body, secret } of cases) assert.equal(hmacSha1Hex(body, secret), reference(body, secret))
  })

  test('bodies past the scratch buffer (large batches) sign the same', () => {
    for (const length of [64 * 1024, 64 * 1024 + 1, 300_000]) {
      const body = randomBytes(length)
      assert.equal(hmacSha1Hex(body, 'bench-secret'), reference(body, 'bench-secret'))
    }
  })

  test('matches an independent HMAC-SHA1 (openssl dgst)', () => {
    const body = Buffer.from('{"userId":"jürgen","event":"Café crème 🎉"}', 'utf8')
    assert.equal(hmacSha1Hex(body, 'whsec_simple'), opensslHmacSha1(body, 'whsec_simple'))
  })
})
