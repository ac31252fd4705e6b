import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Source } from '../../src/domain/sources.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send, trackCall } from '../helpers/tracking.ts'

let sluice: TestSluice
let source: Source

before(async () => {
  sluice = await startTestSluice()
  source = await sluice.createSource('Tracking API tests')
})
after(() => sluice.destroy())

async function stored(messageId: string) {
  const message = await sluice.store.getMessage(source.id, messageId)
  assert.ok(message, `message ${messageId} should be stored`)
  return message.payload
}

describe('endpoints', () => {
  const calls: Record<string, Record<string, unknown>> = {
    identify: { userId: 'u1', traits: { email: 'a@example.com' } },
    track: { userId: 'u1', event: 'Signed Up', properties: { plan: 'pro' } },
    page: { anonymousId: 'a1', name: 'Home', properties: { path: '/' } },
    screen: { userId: 'u1', name: 'Settings' },
    group: { userId: 'u1', groupId: 'g1', traits: { name: 'Acme' } },
    alias: { userId: 'u1', previousId: 'a1' },
  }
  for (const [type, call] of Object.entries(calls)) {
    test(`POST /v1/${type} stores a ${type} message`, async () => {
      const messageId = `single-${type}`
      const response = await send(
        sluice.url,
        `/v1/${type}`,
        { ...call, messageId },
        { writeKey: source.writeKey },
      )
      assert.equal(response.status, 200)
      assert.equal(response.text, '{"success":true}')
      assert.equal(response.contentType, 'application/json; charset=utf-8')
      const payload = await stored(messageId)
      assert.equal(payload.type, type)
      for (const [key, value] of Object.entries(call)) assert.deepEqual(payload[key], value)
    })
  }

  test('the path decides the type of a single call', async () => {
    const response = await send(
      sluice.url,
      '/v1/identify',
      { type: 'track', userId: 'u1', messageId: 'path-type' },
      { writeKey: source.writeKey },
    )
    assert.equal(response.status, 200)
    assert.equal((await stored('path-type')).type, 'identify')
  })

  for (const path of ['/v1/batch', '/v1/import']) {
    test(`POST ${path} stores every message of the batch`, async () => {
      const batch = ['identify', 'track', 'page'].map((type, i) => ({
        type,
        userId: 'u2',
        event: 'E',
        messageId: `${path}-${i}`,
      }))
      const response = await send(sluice.url, path, { batch }, { writeKey: source.writeKey })
      assert.equal(response.status, 200)
      assert.deepEqual(response.body, { success: true })
      for (const message of batch) assert.equal((await stored(message.messageId)).type, message.type)
    })
  }

  test('an empty batch is a success', async () => {
    const response = await send(sluice.url, '/v1/batch', { batch: [] }, { writeKey: source.writeKey })
    assert.deepEqual([response.status, response.body], [200, { success: true }])
  })

  test('a body without a batch array is a 400 that says what to send', async () => {
    const response = await send(sluice.url, '/v1/batch', { messages: [] }, { writeKey: source.writeKey })
    assert.equal(response.status, 400)
    assert.match(response.body.error.message, /"batch" array/)
  })

  test('CORS preflight for browser SDKs', async () => {
    const response = await fetch(`${sluice.url}/v1/batch`, { method: 'OPTIONS' })
    assert.equal(response.status, 204)
    assert.equal(response.headers.get('access-control-allow-origin'), '*')
    assert.match(response.headers.get('access-control-allow-headers') ?? '', /authorization/)
  })

  test('text/plain bodies (sent by browser SDKs) are read as JSON', async () => {
    const response = await send(sluice.url, '/v1/track', trackCall({ messageId: 'text-plain' }), {
      writeKey: source.writeKey,
      headers: { 'content-type': 'text/plain' },
    })
    assert.equal(response.status, 200)
    await stored('text-plain')
  })
})

describe('authentication', () => {
  test('write key as Basic user name with an empty password', async () => {
    const response = await send(sluice.url, '/v1/track', trackCall(), { writeKey: source.writeKey })
    assert.equal(response.status, 200)
  })

  test('write key in the body', async () => {
    const response = await send(sluice.url, '/v1/batch', { writeKey: source.writeKey, batch: [trackCall()] })
    assert.equal(response.status, 200)
    const single = await send(sluice.url, '/v1/track', {
      ...trackCall({ messageId: 'body-key' }),
      writeKey: source.writeKey,
    })
    assert.equal(single.status, 200)
    assert.equal((await stored('body-key')).writeKey, undefined, 'the write key is never stored')
  })

  test('missing write key: 401 with a message saying how to send it', async () => {
    const response = await send(sluice.url, '/v1/track', trackCall())
    assert.equal(response.status, 401)
    assert.equal(response.body.error.code, 'missing_write_key')
    assert.match(response.body.error.message, /Basic user name/)
  })

  test('unknown write key: 401', async () => {
    const response = await send(sluice.url, '/v1/track', trackCall(), { writeKey: 'nope' })
    assert.equal(response.status, 401)
    assert.equal(response.body.error.code, 'unknown_write_key')
  })

  test('disabled source: 401, and nothing stored', async () => {
    const disabled = await sluice.store.createSource({ name: 'off', enabled: false })
    const response = await send(sluice.url, '/v1/track', trackCall({ messageId: 'disabled-1' }), {
      writeKey: disabled.writeKey,
    })
    assert.equal(response.status, 401)
    assert.equal(response.body.error.code, 'source_disabled')
    assert.equal(await sluice.store.getMessage(disabled.id, 'disabled-1'), null)
  })
})

describe('per-message validation', () => {
  const invalid: [string, Record<string, unknown>, RegExp][] = [
    ['no userId or anonymousId', { type: 'track', event: 'E' }, /userId or \.anonymousId is required/],
    ['empty userId', { type: 'identify', userId: '' }, /userId or \.anonymousId is required/],
    ['track without event', { type: 'track', userId: 'u' }, /\.event is required/],
    ['group without groupId', { type: 'group', userId: 'u' }, /\.groupId is required/],
    ['alias without previousId', { type: 'alias', userId: 'u' }, /\.previousId is required/],
    [
      'alias without userId',
      { type: 'alias', anonymousId: 'a', previousId: 'p' },
      /\.userId is required for alias/,
    ],
    [
      'unknown type',
      { type: 'purchase', userId: 'u' },
      /\.type must be one of identify, track, page, screen, group, alias/,
    ],
    ['missing type', { userId: 'u' }, /\.type must be one of/],
    [
      'properties not an object',
      { type: 'track', userId: 'u', event: 'E', properties: [1] },
      /\.properties must be a JSON object/,
    ],
    [
      'bad timestamp',
      { type: 'track', userId: 'u', event: 'E', timestamp: 'yesterday' },
      /\.timestamp must be an ISO 8601/,
    ],
    [
      'messageId not a string',
      { type: 'track', userId: 'u', event: 'E', messageId: 5 },
      /\.messageId must be a non-empty string/,
    ],
    [
      'messageId with NUL',
      { type: 'track', userId: 'u', event: 'E', messageId: 'a\u0000b' },
      /without NUL characters/,
    ],
    [
      'messageId with a lone surrogate',
      { type: 'track', userId: 'u', event: 'E', messageId: 'a\ud800b' },
      /lone surrogates/,
    ],
  ]

  for (const [name, message, error] of invalid) {
    test(`${name}: rejected alone, valid neighbours accepted`, async () => {
      const batch = [
        trackCall({ messageId: `${name}-before` }),
        message,
        trackCall({ messageId: `${name}-after` }),
      ]
      const response = await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })
      assert.equal(response.status, 200)
      assert.equal(response.body.success, true)
      assert.equal(response.body.accepted, 2)
      assert.equal(response.body.rejected.length, 1)
      assert.equal(response.body.rejected[0].index, 1)
      assert.match(response.body.rejected[0].error, error)
      await stored(`${name}-before`)
      await stored(`${name}-after`)
    })
  }

  test('a non-object item is rejected alone', async () => {
    const response = await send(
      sluice.url,
      '/v1/batch',
      { batch: ['x', trackCall()] },
      { writeKey: source.writeKey },
    )
    assert.deepEqual(response.body, {
      success: true,
      accepted: 1,
      rejected: [{ index: 0, error: 'Each message must be a JSON object.' }],
    })
  })

  test('an invalid single call answers with the same response shape', async () => {
    const response = await send(sluice.url, '/v1/track', { userId: 'u' }, { writeKey: source.writeKey })
    assert.equal(response.status, 200)
    assert.equal(response.body.accepted, 0)
    assert.match(response.body.rejected[0].error, /\.event is required/)
  })

  test('rejections are counted on the source', async () => {
    const before = await sluice.store.getSourceStats(source.id)
    await send(
      sluice.url,
      '/v1/batch',
      { batch: [{ type: 'track' }, { type: 'track' }] },
      { writeKey: source.writeKey },
    )
    const afterStats = await sluice.store.getSourceStats(source.id)
    assert.equal(afterStats.rejected - before.rejected, 2)
  })
})

describe('enrichment', () => {
  test('messageId is kept when given and generated when absent', async () => {
    await send(sluice.url, '/v1/track', trackCall({ messageId: 'given-id' }), { writeKey: source.writeKey })
    assert.equal((await stored('given-id')).messageId, 'given-id')
    const anon = await sluice.store.createSource({ name: 'gen', enabled: true })
    await send(sluice.url, '/v1/track', trackCall(), { writeKey: anon.writeKey })
    assert.equal(await sluice.store.countMessages(anon.id), 1)
  })

  test('receivedAt is the server clock; no timestamp means timestamp = receivedAt', async () => {
    const t0 = Date.now()
    await send(sluice.url, '/v1/track', trackCall({ messageId: 'no-ts' }), { writeKey: source.writeKey })
    const payload = await stored('no-ts')
    const receivedAt = Date.parse(payload.receivedAt as string)
    assert.ok(receivedAt >= t0 - 5 && receivedAt <= Date.now() + 5)
    assert.equal(payload.timestamp, payload.receivedAt)
    assert.equal(payload.originalTimestamp, undefined)
  })

  test('sentAt corrects client clock skew: timestamp = receivedAt - (sentAt - originalTimestamp)', async () => {
    // The client's clock is an hour fast; the event happened 10 s before sending.
    const clientNow = Date.now() + 3_600_000
    const original = new Date(clientNow - 10_000).toISOString()
    const sentAt = new Date(clientNow).toISOString()
    await send(
      sluice.url,
      '/v1/batch',
      { sentAt, batch: [trackCall({ messageId: 'skew', timestamp: original })] },
      {
        writeKey: source.writeKey,
      },
    )
    const payload = await stored('skew')
    assert.equal(payload.originalTimestamp, original)
    const expected = Date.parse(payload.receivedAt as string) - 10_000
    assert.equal(payload.timestamp, new Date(expected).toISOString())
  })

  test('without sentAt the client timestamp is kept, even far in the past (historical import)', async () => {
    const historical = '2019-03-01T08:30:00.000Z'
    await send(
      sluice.url,
      '/v1/import',
      { batch: [trackCall({ messageId: 'old', timestamp: historical })] },
      {
        writeKey: source.writeKey,
      },
    )
    const payload = await stored('old')
    assert.equal(payload.timestamp, historical)
    assert.equal(payload.originalTimestamp, historical)
  })

  test('context.ip comes from the connection when absent and is kept when given', async () => {
    await send(sluice.url, '/v1/track', trackCall({ messageId: 'ip-1' }), { writeKey: source.writeKey })
    assert.equal(((await stored('ip-1')).context as Record<string, unknown>).ip, '127.0.0.1')
    await send(sluice.url, '/v1/track', trackCall({ messageId: 'ip-2', context: { ip: '203.0.113.9' } }), {
      writeKey: source.writeKey,
    })
    assert.equal(((await stored('ip-2')).context as Record<string, unknown>).ip, '203.0.113.9')
  })

  test("the batch's context and integrations merge into each item; the item's own keys win", async () => {
    await send(
      sluice.url,
      '/v1/batch',
      {
        context: { library: { name: 'sdk' }, locale: 'en-US' },
        integrations: { All: false, Webhooks: true },
        batch: [
          trackCall({ messageId: 'merge', context: { locale: 'fr-FR' }, integrations: { Webhooks: false } }),
        ],
      },
      { writeKey: source.writeKey },
    )
    const payload = await stored('merge')
    assert.deepEqual(payload.context, { library: { name: 'sdk' }, locale: 'fr-FR', ip: '127.0.0.1' })
    assert.deepEqual(payload.integrations, { All: false, Webhooks: false })
  })

  test('numeric ids become strings', async () => {
    await send(
      sluice.url,
      '/v1/group',
      { userId: 42, groupId: 7, messageId: 'numeric' },
      { writeKey: source.writeKey },
    )
    const payload = await stored('numeric')
    assert.equal(payload.userId, '42')
    assert.equal(payload.groupId, '7')
  })

  test('__proto__ and constructor keys stay plain data', async () => {
    const raw = `{"type":"track","userId":"u","event":"E","messageId":"proto","properties":{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}},"context":{"__proto__":{"admin":true}}}`
    const response = await send(sluice.url, '/v1/batch', undefined, {
      writeKey: source.writeKey,
      raw: `{"batch":[${raw}]}`,
    })
    assert.equal(response.status, 200)
    assert.equal(({} as Record<string, unknown>).polluted, undefined)
    assert.equal(({} as Record<string, unknown>).admin, undefined)
    const payload = await stored('proto')
    assert.deepEqual(JSON.parse(JSON.stringify(payload.properties)), {
      ['__proto__']: { polluted: true },
      constructor: { prototype: { x: 1 } },
    })
  })
})
