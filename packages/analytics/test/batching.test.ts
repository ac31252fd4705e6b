import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Analytics } from '../src/index.ts'
import { LIBRARY } from '../src/version.ts'
import { sleep, startServer, type TestServer } from './helpers/server.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe('batching and flush rules', () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())

  const reset = () => {
    server.requests.length = 0
    server.respond = () => ({})
  }

  test('default flushAt: 20 queued messages go as one batch at once, 19 wait', async () => {
    reset()
    const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url })
    assert.equal(analytics.settings.flushAt, 20)
    for (let i = 0; i < 19; i++) analytics.track({ userId: 'u1', event: 'Step', properties: { i } })
    await sleep(300)
    assert.equal(server.requests.length, 0, 'no request before the 20th message')
    analytics.track({ userId: 'u1', event: 'Step', properties: { i: 19 } })
    const [request] = await server.waitForRequests(1, 1000)
    assert.equal(request!.body.batch.length, 20)
    assert.deepEqual(
      request!.body.batch.map((message) => (message.properties as { i: number }).i),
      Array.from({ length: 20 }, (_, i) => i),
    )
    await analytics.close()
  })

  test('default flushInterval: a lone message is sent 5 seconds after it was queued, not before', async () => {
    reset()
    const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url })
    assert.equal(analytics.settings.flushInterval, 5000)
    const queuedAt = Date.now()
    analytics.identify({ userId: 'u1', traits: { plan: 'pro' } })
    await sleep(4700)
    assert.equal(server.requests.length, 0, 'nothing sent before 5 s')
    const [request] = await server.waitForRequests(1, 1500)
    const waited = request!.at - queuedAt
    assert.ok(waited >= 4990 && waited < 5800, `sent after ${waited} ms`)
    assert.equal(request!.body.batch.length, 1)
    await analytics.close()
  })

  test('flushAt 1 (the Go Size 1): every call is sent at once in its own request', async () => {
    reset()
    const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url, flushAt: 1 })
    const started = Date.now()
    analytics.track({ userId: 'u1', event: 'A' })
    await server.waitForRequests(1, 2000)
    analytics.track({ userId: 'u1', event: 'B' })
    analytics.track({ userId: 'u1', event: 'C' })
    const requests = await server.waitForRequests(3, 2000)
    // Well under the 5 s flush interval: no call waited for the timer.
    assert.ok(Date.now() - started < 2500)
    assert.deepEqual(
      requests.map((request) => request.body.batch.map((message) => message.event)),
      [['A'], ['B'], ['C']],
    )
    await analytics.close()
  })

  test('a shorter flushInterval flushes a partial batch on time', async () => {
    reset()
    const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url, flushInterval: 100 })
    const queuedAt = Date.now()
    analytics.track({ userId: 'u1', event: 'A' })
    analytics.track({ userId: 'u1', event: 'B' })
    const [request] = await server.waitForRequests(1, 1000)
    assert.ok(request!.at - queuedAt >= 95, 'not before the interval')
    assert.equal(request!.body.batch.length, 2)
    await analytics.close()
  })

  test('wire format: POST /v1/batch, Basic auth with the write key, Segment message shape', async () => {
    reset()
    const analytics = new Analytics({ writeKey: 'write:key', endpoint: `${server.url}/` })
    const ids = [
      analytics.identify({ userId: 'u1', traits: { email: 'a@example.com' } }),
      analytics.track({ userId: 'u1', event: 'Order Completed', properties: { total: 12.5 } }),
      analytics.page({
        anonymousId: 'anon-1',
        name: 'Home',
        category: 'Docs',
        url: 'https://x.test/',
        path: '/',
      }),
      analytics.screen({ userId: 'u1', name: 'Settings' }),
      analytics.group({ userId: 'u1', groupId: 'g1', traits: { plan: 'team' } }),
      analytics.alias({ previousId: 'anon-1', userId: 'u1' }),
    ]
    const sentBefore = Date.now()
    await analytics.flush()
    const [request] = server.requests
    assert.equal(request!.method, 'POST')
    assert.equal(request!.path, '/v1/batch')
    assert.equal(request!.headers.authorization, `Basic ${Buffer.from('write:key:').toString('base64')}`)
    assert.equal(request!.headers['content-type'], 'application/json')
    assert.match(request!.body.sentAt!, ISO)
    assert.ok(Math.abs(Date.parse(request!.body.sentAt!) - sentBefore) < 1000)
    const [identify, track, page, screen, group, alias] = request!.body.batch
    assert.deepEqual(
      request!.body.batch.map((message) => message.messageId),
      ids,
    )
    for (const message of request!.body.batch) {
      assert.match(message.messageId, UUID)
      assert.match(message.timestamp as string, ISO)
      assert.deepEqual(message.context, { library: { name: '@sluice/analytics', version: LIBRARY.version } })
    }
    assert.deepEqual(
      { ...identify, messageId: 0, timestamp: 0, context: 0 },
      {
        type: 'identify',
        userId: 'u1',
        traits: { email: 'a@example.com' },
        messageId: 0,
        timestamp: 0,
        context: 0,
      },
    )
    assert.deepEqual(
      { type: track!.type, event: track!.event, properties: track!.properties, userId: track!.userId },
      { type: 'track', event: 'Order Completed', properties: { total: 12.5 }, userId: 'u1' },
    )
    assert.equal(page!.type, 'page')
    assert.equal(page!.anonymousId, 'anon-1')
    assert.equal(page!.userId, undefined)
    assert.equal(page!.name, 'Home')
    assert.equal(page!.category, 'Docs')
    assert.deepEqual(page!.properties, { url: 'https://x.test/', path: '/' })
    assert.equal(screen!.type, 'screen')
    assert.equal(screen!.name, 'Settings')
    assert.deepEqual(
      { type: group!.type, groupId: group!.groupId, traits: group!.traits },
      { type: 'group', groupId: 'g1', traits: { plan: 'team' } },
    )
    assert.deepEqual(
      { type: alias!.type, previousId: alias!.previousId, userId: alias!.userId },
      { type: 'alias', previousId: 'anon-1', userId: 'u1' },
    )
    await analytics.close()
  })

  test('caller fields are kept: messageId, timestamp, context (library added), integrations on every call', async () => {
    reset()
    const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url })
    const integrations = { All: false, Webhooks: true }
    const common = {
      integrations,
      context: { ip: '203.0.113.9' },
      timestamp: new Date('2020-01-02T03:04:05.678Z'),
    }
    analytics.identify({ userId: 'u1', ...common, messageId: 'm-identify' })
    analytics.track({ userId: 'u1', event: 'E', ...common })
    analytics.page({
      userId: 'u1',
      ...common,
      properties: { url: 'https://kept.test', title: 'T' },
      title: 'Wins',
    })
    analytics.screen({ userId: 'u1', ...common })
    analytics.group({ userId: 'u1', groupId: 'g', ...common })
    analytics.alias({ userId: 'u1', previousId: 'p', ...common, timestamp: '2020-01-02T04:04:05.678+01:00' })
    analytics.track({
      userId: 'u1',
      event: 'Own library',
      context: { library: { name: 'wrapper', version: '9' } },
    })
    await analytics.flush()
    const batch = server.requests[0]!.body.batch
    assert.equal(batch[0]!.messageId, 'm-identify')
    for (const message of batch.slice(0, 6)) {
      assert.deepEqual(message.integrations, integrations, `${message.type} keeps integrations`)
      assert.equal(message.timestamp, '2020-01-02T03:04:05.678Z', `${message.type} keeps its timestamp`)
      assert.deepEqual(message.context, { ip: '203.0.113.9', library: LIBRARY })
    }
    assert.deepEqual(batch[2]!.properties, { url: 'https://kept.test', title: 'Wins' })
    assert.deepEqual(batch[6]!.context, { library: { name: 'wrapper', version: '9' } })
    await analytics.close()
  })

  test('a batch is cut before it would pass 500 KB (default maxBatchBytes); nothing is lost', async () => {
    reset()
    const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url, flushAt: 100 })
    assert.equal(analytics.settings.maxBatchBytes, 512_000)
    const filler = 'x'.repeat(30_000)
    const ids: string[] = []
    for (let i = 0; i < 40; i++)
      ids.push(analytics.track({ userId: 'u1', event: 'Big', properties: { i, filler } }))
    await analytics.flush()
    assert.ok(server.requests.length >= 3, `${server.requests.length} requests`)
    for (const request of server.requests) {
      assert.ok(request.raw.length <= 512_000, `body of ${request.raw.length} bytes`)
    }
    // Batches were cut by size, not count: the full ones hold as many 30 KB messages as fit.
    assert.ok(Math.max(...server.requests.map((request) => request.raw.length)) > 512_000 - 31_000)
    // Batches travel concurrently, so compare as sets.
    assert.deepEqual(
      server
        .messages()
        .map((message) => message.messageId)
        .sort(),
      ids.sort(),
    )
    await analytics.close()
  })

  test('body size is counted exactly in UTF-8 bytes: three messages fill maxBatchBytes to the byte', async () => {
    reset()
    const call = (i: number) => ({
      userId: 'u1',
      event: 'Ünïcödé ✓ 🎉',
      messageId: `m-${String(i).padStart(2, '0')}`,
      timestamp: '2026-01-31T12:00:00.000Z',
    })
    // Learn the serialized size of one such message (all have the same size).
    const probe = new Analytics({ writeKey: 'wk', endpoint: server.url, flushAt: 1 })
    probe.track(call(0))
    await probe.close()
    const size = Buffer.byteLength(JSON.stringify(server.requests[0]!.body.batch[0]))
    assert.ok(
      size > JSON.stringify(server.requests[0]!.body.batch[0]).length,
      'multi-byte characters present',
    )
    reset()
    const envelope = '{"batch":[],"sentAt":"2026-01-31T12:00:00.000Z"}'.length
    const maxBatchBytes = envelope + 3 * size + 2
    const options = { flushAt: 100, maxBatchBytes, maxMessageBytes: size, maxConcurrentRequests: 1 }
    const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url, ...options })
    for (let i = 0; i < 7; i++) analytics.track(call(i))
    await analytics.flush()
    assert.deepEqual(
      server.requests.map((request) => request.body.batch.length),
      [3, 3, 1],
    )
    assert.equal(server.requests[0]!.raw.length, maxBatchBytes)
    assert.equal(server.requests[1]!.raw.length, maxBatchBytes)
    await analytics.close()
  })

  test('flush() resolves once everything queued before it is delivered', async () => {
    reset()
    server.respond = () => ({ delay: 50 })
    const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url, maxConcurrentRequests: 2 })
    for (let i = 0; i < 95; i++) analytics.track({ userId: 'u1', event: 'E', properties: { i } })
    await analytics.flush()
    assert.equal(server.messages().length, 95)
    assert.deepEqual(analytics.stats, { pending: 0, delivered: 95, failed: 0, dropped: 0 })
    await analytics.flush()
    await analytics.close()
  })

  test('at most maxConcurrentRequests requests are in flight (default 16)', async () => {
    reset()
    // Replies slow enough that every allowed request has started before the first one ends,
    // even on a loaded machine: the peak then shows the limit exactly.
    server.respond = () => ({ delay: 200 })
    server.peakInFlight = 0
    const fewer = new Analytics({
      writeKey: 'wk',
      endpoint: server.url,
      flushAt: 5,
      maxConcurrentRequests: 3,
    })
    for (let i = 0; i < 200; i++) fewer.track({ userId: 'u1', event: 'E' })
    await fewer.close()
    assert.equal(server.peakInFlight, 3)
    server.peakInFlight = 0
    const defaults = new Analytics({ writeKey: 'wk', endpoint: server.url, flushAt: 5 })
    assert.equal(defaults.settings.maxConcurrentRequests, 16)
    for (let i = 0; i < 200; i++) defaults.track({ userId: 'u1', event: 'E' })
    await defaults.close()
    assert.equal(server.peakInFlight, 16)
    assert.equal(server.messages().length, 400)
  })
})
