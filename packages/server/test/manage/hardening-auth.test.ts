// Guessing tokens: failed authentication is throttled per client address (manage/auth-throttle.ts),
// on a real server — wrong Bearer tokens, wrong sign-ins and forged session cookies count; valid
// requests and the Tracking API are never slowed; SLUICE_TRUST_PROXY decides whose address it is.
// And a short SLUICE_ADMIN_TOKEN stops Sluice at start.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { checkAdminToken } from '../../src/app/admin-token.ts'
import { createSluice } from '../../src/app/server.ts'
import { ConfigError, loadConfig } from '../../src/config.ts'
import { AuthThrottle, clientKey, WINDOW_MS } from '../../src/manage/auth-throttle.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { rawRequest, writeKeyAuth } from './helpers.ts'

const LIMIT = 20

describe('failed authentication is throttled per address', () => {
  let sluice: TestSluice

  before(async () => {
    sluice = await startTestSluice({ trustProxy: true })
  })
  after(() => sluice.destroy())

  /** A request from `address` (the proxy Sluice trusts says so). */
  const from = (address: string, path: string, init: RequestInit = {}) =>
    fetch(sluice.url + path, {
      ...init,
      headers: { 'x-forwarded-for': address, ...(init.headers as Record<string, string>) },
    })
  const wrongBearer = { authorization: 'Bearer a-token-somebody-guessed-0123456789' }

  test('20 wrong tokens answer 401; then every attempt, right or wrong, 429 with Retry-After', async () => {
    const address = '203.0.113.10'
    for (let attempt = 1; attempt <= LIMIT; attempt++) {
      const response = await from(address, '/api/v1/sources', { headers: wrongBearer })
      assert.equal(response.status, 401, `attempt ${attempt}`)
    }
    for (const headers of [wrongBearer, { authorization: `Bearer ${sluice.adminToken}` }]) {
      const response = await from(address, '/api/v1/sources', { headers })
      assert.equal(response.status, 429)
      const retryAfter = Number(response.headers.get('retry-after'))
      assert.ok(retryAfter >= 1 && retryAfter <= WINDOW_MS / 1000, `Retry-After: ${retryAfter}`)
      const body = (await response.json()) as { error: { code: string; message: string } }
      assert.equal(body.error.code, 'too_many_failures')
      assert.match(body.error.message, /20 attempts to authenticate from this address failed within a minute/)
      assert.match(body.error.message, /check the token/)
    }
    // Another address is not affected.
    const other = await from('203.0.113.11', '/api/v1/sources', {
      headers: { authorization: `Bearer ${sluice.adminToken}` },
    })
    assert.equal(other.status, 200)
  })

  test('only failures count: hundreds of valid requests, and requests without credentials, do not', async () => {
    const address = '203.0.113.20'
    for (let i = 0; i < 200; i++) {
      const response = await from(address, '/api/v1/sources', {
        headers: { authorization: `Bearer ${sluice.adminToken}` },
      })
      assert.equal(response.status, 200)
    }
    // The web app asks who is signed in on every load, without a cookie before signing in.
    for (let i = 0; i < 50; i++) assert.equal((await from(address, '/api/v1/session')).status, 401)
    for (let i = 0; i < LIMIT - 1; i++) {
      assert.equal((await from(address, '/api/v1/sources', { headers: wrongBearer })).status, 401)
    }
    const stillOpen = await from(address, '/api/v1/sources', {
      headers: { authorization: `Bearer ${sluice.adminToken}` },
    })
    assert.equal(stillOpen.status, 200)
  })

  test('wrong sign-ins and forged session cookies count; the metrics endpoint is guarded too', async () => {
    const address = '203.0.113.30'
    for (let i = 0; i < 10; i++) {
      const response = await from(address, '/api/v1/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: `guess-${i}` }),
      })
      assert.equal(response.status, 401)
    }
    for (let i = 0; i < 5; i++) {
      const response = await from(address, '/api/v1/sources', {
        headers: { cookie: `sluice_session=admin.99999999999999.forged${i}` },
      })
      assert.equal(response.status, 401)
    }
    for (let i = 0; i < 5; i++) {
      assert.equal((await from(address, '/metrics', { headers: wrongBearer })).status, 401)
    }
    const signIn = await from(address, '/api/v1/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: sluice.adminToken }),
    })
    assert.equal(signIn.status, 429)
    assert.ok(Number(signIn.headers.get('retry-after')) >= 1)
  })

  test("the Tracking API is never throttled: a locked-out address's valid calls are accepted", async () => {
    const address = '203.0.113.40'
    for (let i = 0; i < LIMIT; i++) await from(address, '/api/v1/sources', { headers: wrongBearer })
    assert.equal((await from(address, '/api/v1/sources', { headers: wrongBearer })).status, 429)
    const source = await sluice.createSource('Tracked')
    // Wrong write keys are answered 401 as always, however many.
    for (let i = 0; i < 50; i++) {
      const wrong = await from(address, '/v1/track', {
        method: 'POST',
        headers: { authorization: writeKeyAuth(`wrong-key-${i}`), 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'u', event: 'E' }),
      })
      assert.equal(wrong.status, 401)
    }
    for (let i = 0; i < 100; i++) {
      const response = await from(address, '/v1/track', {
        method: 'POST',
        headers: { authorization: writeKeyAuth(source.writeKey), 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'u', event: 'E', messageId: `throttle-${i}` }),
      })
      assert.equal(response.status, 200)
    }
    assert.equal((await sluice.api('GET', `/api/v1/sources/${source.id}`)).body.stats.accepted, 100)
  })
})

test('without SLUICE_TRUST_PROXY the connection address counts, whatever X-Forwarded-For says', async () => {
  const sluice = await startTestSluice()
  try {
    for (let i = 0; i < LIMIT; i++) {
      const response = await rawRequest(sluice.url, 'GET', '/api/v1/sources', {
        authorization: `Bearer guess-${i}-0123456789abcdefghijk`,
      })
      assert.equal(response.status, 401)
    }
    const spoofed = await fetch(`${sluice.url}/api/v1/sources`, {
      headers: { authorization: `Bearer ${sluice.adminToken}`, 'x-forwarded-for': '198.51.100.7' },
    })
    assert.equal(spoofed.status, 429, 'a forged X-Forwarded-For does not escape the lockout')
  } finally {
    await sluice.destroy()
  }
})

test('the window: a minute from the first failure, then the count starts again; IPv6 counts per /64', () => {
  let now = 1_000_000
  const throttle = new AuthThrottle({ failuresPerWindow: 3, now: () => now })
  for (let i = 0; i < 3; i++) {
    throttle.check('192.0.2.1')
    throttle.failed('192.0.2.1')
  }
  assert.throws(() => throttle.check('192.0.2.1'), { statusCode: 429, retryAfterSeconds: 60 })
  now += WINDOW_MS - 1_500
  assert.throws(() => throttle.check('192.0.2.1'), { retryAfterSeconds: 2 })
  now += 1_500
  throttle.check('192.0.2.1')

  throttle.failed('2001:db8:1:2:aaaa::1')
  throttle.failed('2001:db8:1:2:bbbb::2')
  throttle.failed('2001:0db8:0001:0002:cccc:0:0:3')
  assert.throws(() => throttle.check('2001:db8:1:2::4'), { statusCode: 429 })
  throttle.check('2001:db8:1:3::1')
  assert.equal(clientKey('::ffff:192.0.2.9'), '192.0.2.9')
  assert.equal(clientKey('::1'), '0:0:0:0::/64')
  assert.equal(clientKey('fe80::1'), 'fe80:0:0:0::/64')

  const off = new AuthThrottle({ failuresPerWindow: 0 })
  for (let i = 0; i < 1_000; i++) off.failed('192.0.2.1')
  off.check('192.0.2.1')
  assert.equal(loadConfig({}).authFailuresPerMinute, 20)
  assert.equal(loadConfig({ SLUICE_AUTH_FAILURES_PER_MINUTE: '0' }).authFailuresPerMinute, 0)
})

test('a SLUICE_ADMIN_TOKEN shorter than 24 characters stops Sluice at start, saying how to make one', async () => {
  assert.throws(
    () => checkAdminToken('short-token'),
    (error: Error) =>
      error instanceof ConfigError &&
      /SLUICE_ADMIN_TOKEN: is 11 characters long; use at least 24/.test(error.message) &&
      error.message.includes('openssl rand -base64 32'),
  )
  checkAdminToken('x'.repeat(24))
  checkAdminToken(undefined)
  await assert.rejects(
    createSluice({ ...loadConfig({}), adminToken: 'bench', logLevel: 'silent', dataDir: '/nonexistent/x' }),
    ConfigError,
  )
})
