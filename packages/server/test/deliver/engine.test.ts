/**
 * End to end: Tracking API → store → engine → real HTTP(S) receivers. Each test runs its own Sluice.
 */
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import type { Delivery } from '../../src/domain/deliveries.ts'
import type { Destination, WebhookEndpoint } from '../../src/domain/destinations.ts'
import type { Source } from '../../src/domain/sources.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import {
  eventually,
  opensslHmacSha1,
  type Receiver,
  type Respond,
  selfSignedCertificate,
  sleep,
  startHttpsReceiver,
  startReceiver,
} from './receivers.ts'

const cleanup: (() => Promise<void>)[] = []
after(async () => {
  for (const close of cleanup.reverse()) await close()
})

async function receiver(respond?: Respond): Promise<Receiver> {
  const r = await startReceiver(respond)
  cleanup.push(() => r.close())
  return r
}

async function sluiceWith(overrides: Parameters<typeof startTestSluice>[0] = {}): Promise<TestSluice> {
  const s = await startTestSluice({
    retry: { baseDelayMs: 40, maxDelayMs: 80, windowMs: 10_000 },
    ...overrides,
  })
  cleanup.push(() => s.destroy())
  return s
}

async function setup(
  sluice: TestSluice,
  webhooks: WebhookEndpoint[],
  sharedSecret: string | null = null,
): Promise<{ source: Source; destination: Destination }> {
  const source = await sluice.createSource()
  const destination = await sluice.store.createDestination({
    name: 'hooks',
    type: 'webhooks',
    enabled: true,
    sourceIds: [source.id],
    settings: { webhooks, sharedSecret },
  })
  return { source, destination }
}

async function deliveries(sluice: TestSluice, destinationId: string): Promise<Delivery[]> {
  return sluice.store.listDeliveries(destinationId, { limit: 500 })
}

async function settled(
  sluice: TestSluice,
  destinationId: string,
  count: number,
  timeoutMs = 5_000,
): Promise<Delivery[]> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const list = await deliveries(sluice, destinationId)
    const final = list.filter((d) => d.status === 'delivered' || d.status === 'failed')
    if (final.length >= count || Date.now() > end) return list
    await sleep(20)
  }
}

const hook = (r: Receiver, headers: Record<string, string> = {}): WebhookEndpoint => ({
  url: `${r.url}/hook`,
  headers,
})

describe('what arrives', () => {
  test('every call type arrives as its documented shape, byte for byte', async () => {
    const sluice = await sluiceWith()
    const r = await receiver()
    const { source } = await setup(sluice, [hook(r)])
    const timestamp = '2026-01-31T12:00:00.000Z'
    const context = { ip: '10.1.2.3', library: { name: 'test' } }
    const calls = [
      {
        type: 'track',
        userId: 'u1',
        event: 'Order Completed',
        properties: { total: 12.5 },
        messageId: 'm-track',
      },
      { type: 'identify', userId: 'u1', traits: { plan: 'pro', seats: 3 }, messageId: 'm-identify' },
      { type: 'alias', userId: 'u1', previousId: 'anon-1', messageId: 'm-alias' },
      { type: 'group', userId: 'u1', groupId: 'g1', traits: { name: 'Acme' }, messageId: 'm-group' },
      {
        type: 'page',
        anonymousId: 'a1',
        name: 'Pricing',
        properties: { title: 'Our pricing', plan: 'pro' },
        context: {
          ...context,
          page: { path: '/pricing', url: 'https://example.com/pricing', referrer: 'https://x.io/' },
        },
        messageId: 'm-page',
      },
    ].map((call) => ({ context, timestamp, integrations: { All: true }, ...call }))
    const response = await send(sluice.url, '/v1/batch', { batch: calls }, { writeKey: source.writeKey })
    assert.equal(response.status, 200)
    assert.ok(await eventually(() => r.requests.length === 5, 5_000))

    const bodies = new Map(
      r.requests.map((q) => [JSON.parse(q.body.toString()).messageId, q.body.toString()]),
    )
    const ctx = '"context":{"ip":"10.1.2.3","library":{"name":"test"}}'
    assert.equal(
      bodies.get('m-track'),
      `{"version":1,"type":"track","userId":"u1","event":"Order Completed","properties":{"total":12.5},${ctx},"messageId":"m-track","timestamp":"${timestamp}"}`,
    )
    assert.equal(
      bodies.get('m-identify'),
      `{"version":1,"type":"identify","userId":"u1","traits":{"plan":"pro","seats":3},${ctx},"messageId":"m-identify","timestamp":"${timestamp}"}`,
    )
    assert.equal(
      bodies.get('m-alias'),
      `{"version":1,"type":"alias","Previous ID":"anon-1","User ID":"u1",${ctx},"messageId":"m-alias","timestamp":"${timestamp}"}`,
    )
    assert.equal(
      bodies.get('m-group'),
      `{"version":1,"type":"group","userId":"u1","groupId":"g1","traits":{"name":"Acme"},${ctx},"messageId":"m-group","timestamp":"${timestamp}"}`,
    )
    const page = JSON.parse(bodies.get('m-page')!)
    assert.deepEqual(page.properties, {
      path: '/pricing',
      referrer: 'https://x.io/',
      title: 'Our pricing',
      url: 'https://example.com/pricing',
      plan: 'pro',
    })
    assert.equal(page.name, 'Pricing')
    assert.equal(page.anonymousId, 'a1')
    assert.equal(page.version, 1)
    assert.equal('integrations' in page, false)
  })

  test('headers: User-Agent, Content-Type, static headers, and X-Signature matching openssl over the exact bytes', async () => {
    const sluice = await sluiceWith()
    const r = await receiver()
    const secret = 'whsec-🔑-ü'
    const { source } = await setup(
      sluice,
      [hook(r, { Authorization: 'Bearer abc', 'X-Tenant': 't-1' })],
      secret,
    )
    await send(
      sluice.url,
      '/v1/track',
      { userId: 'ü-ser', event: 'Käse bestellt 🧀', properties: { note: '日本語' } },
      { writeKey: source.writeKey },
    )
    assert.ok(await eventually(() => r.requests.length === 1, 5_000))
    const request = r.requests[0]!
    assert.equal(request.method, 'POST')
    assert.equal(request.url, '/hook')
    assert.equal(request.headers['user-agent'], 'Sluice/1.0')
    assert.equal(request.headers['content-type'], 'application/json')
    assert.equal(request.headers.authorization, 'Bearer abc')
    assert.equal(request.headers['x-tenant'], 't-1')
    assert.equal(request.headers['x-signature'], opensslHmacSha1(request.body, secret))
    assert.equal(JSON.parse(request.body.toString('utf8')).event, 'Käse bestellt 🧀')
  })

  test('no shared secret: no X-Signature header', async () => {
    const sluice = await sluiceWith()
    const r = await receiver()
    const { source } = await setup(sluice, [hook(r)])
    await send(sluice.url, '/v1/identify', { userId: 'u' }, { writeKey: source.writeKey })
    assert.ok(await eventually(() => r.requests.length === 1, 5_000))
    assert.equal(r.requests[0]!.headers['x-signature'], undefined)
  })

  test('a delete notification goes out through the same path: its three members, signed', async () => {
    const sluice = await sluiceWith()
    const r = await receiver()
    const { destination } = await setup(sluice, [hook(r)], 'delete-secret')
    const results = await sluice.sluice.engine.sendTest(destination, {
      type: 'delete',
      userId: 'u-gone',
      timestamp: '2026-01-31T12:00:00.000Z',
      messageId: 'not delivered',
    })
    assert.equal(results[0]?.statusCode, 200)
    const request = r.requests[0]!
    assert.equal(
      request.body.toString('utf8'),
      '{"type":"delete","userId":"u-gone","timestamp":"2026-01-31T12:00:00.000Z"}',
    )
    assert.equal(request.headers['x-signature'], opensslHmacSha1(request.body, 'delete-secret'))
  })

  test('a new message is attempted at once after the ack, not on the next poll', async () => {
    // The idle poll is a minute here: an arrival within seconds can only come from the commit's wake-up.
    const sluice = await sluiceWith({ deliveryPollMs: 60_000 })
    const r = await receiver()
    const { source } = await setup(sluice, [hook(r)])
    for (const event of ['first', 'second']) {
      await sleep(300) // the engine is idle again
      const before = r.requests.length
      await send(sluice.url, '/v1/track', { userId: 'u', event }, { writeKey: source.writeKey })
      const acked = Date.now()
      assert.ok(
        await eventually(() => r.requests.length === before + 1, 10_000),
        `'${event}' did not arrive within 10 s of its ack; the idle poll is 60 s`,
      )
      assert.ok(Date.now() - acked < 10_000)
    }
  })
})

describe('delivery rules', () => {
  test('multi-endpoint: one of three URLs answering 2xx processes the message; no URL is tried again', async () => {
    const failing1 = await receiver((_q, res) => res.writeHead(500).end('down'))
    const failing2 = await receiver((_q, res) => res.writeHead(503).end('down'))
    const healthy = await receiver()
    const sluice = await sluiceWith()
    const { source, destination } = await setup(sluice, [hook(failing1), hook(healthy), hook(failing2)])
    await send(sluice.url, '/v1/track', { userId: 'u', event: 'E' }, { writeKey: source.writeKey })
    const [delivery] = await settled(sluice, destination.id, 1)
    assert.equal(delivery!.status, 'delivered')
    assert.equal(delivery!.attemptCount, 1)
    assert.equal(delivery!.attempts.length, 3, 'one attempt POSTs to every URL')
    await sleep(300) // several backoff periods
    assert.deepEqual([failing1.requests.length, healthy.requests.length, failing2.requests.length], [1, 1, 1])
  })

  test('a URL with a final answer (404) is closed; retries go only to the URLs still pending', async () => {
    let calls = 0
    const flaky = await receiver((_q, res) => {
      calls++
      res.writeHead(calls < 3 ? 502 : 200).end()
    })
    const gone = await receiver((_q, res) => res.writeHead(404).end('no such hook'))
    const sluice = await sluiceWith()
    const { source, destination } = await setup(sluice, [hook(gone), hook(flaky)])
    await send(sluice.url, '/v1/track', { userId: 'u', event: 'E' }, { writeKey: source.writeKey })
    const [delivery] = await settled(sluice, destination.id, 1)
    assert.equal(delivery!.status, 'delivered')
    assert.equal(delivery!.attemptCount, 3)
    assert.equal(gone.requests.length, 1)
    assert.equal(flaky.requests.length, 3)
    assert.deepEqual(delivery!.closedUrls, [hook(gone).url])
    const first = delivery!.attempts.find((a) => a.url === hook(gone).url)!
    assert.equal(first.statusCode, 404)
    assert.equal(first.responseExcerpt, 'no such hook')
  })

  test('retries back off; the same bytes and messageId are sent each time', async () => {
    let calls = 0
    const r = await receiver((_q, res) => {
      calls++
      res.writeHead(calls < 3 ? 500 : 200).end()
    })
    const sluice = await sluiceWith({ retry: { baseDelayMs: 150, maxDelayMs: 150, windowMs: 10_000 } })
    const { source, destination } = await setup(sluice, [hook(r)], 'secret')
    await send(sluice.url, '/v1/track', { userId: 'u', event: 'E' }, { writeKey: source.writeKey })
    const [delivery] = await settled(sluice, destination.id, 1)
    assert.equal(delivery!.status, 'delivered')
    const times = delivery!.attempts.map((a) => a.attemptedAt)
    assert.ok(times[1]! - times[0]! >= 140 && times[2]! - times[1]! >= 140, `gaps ${times}`)
    assert.equal(new Set(r.requests.map((q) => q.body.toString())).size, 1)
    assert.equal(new Set(r.requests.map((q) => q.headers['x-signature'])).size, 1)
  })

  test('429 with Retry-After is honoured', async () => {
    let calls = 0
    const r = await receiver((_q, res) => {
      calls++
      if (calls === 1) res.writeHead(429, { 'retry-after': '1' }).end()
      else res.writeHead(200).end()
    })
    const sluice = await sluiceWith()
    const { source, destination } = await setup(sluice, [hook(r)])
    await send(sluice.url, '/v1/track', { userId: 'u', event: 'E' }, { writeKey: source.writeKey })
    const [delivery] = await settled(sluice, destination.id, 1, 5_000)
    assert.equal(delivery!.status, 'delivered')
    const [a, b] = delivery!.attempts
    assert.ok(b!.attemptedAt - a!.attemptedAt >= 990, `retried after ${b!.attemptedAt - a!.attemptedAt} ms`)
  })

  test('past the retry window the delivery is dead-lettered, with every attempt recorded', async () => {
    const r = await receiver((_q, res) => res.writeHead(500).end('boom'))
    const sluice = await sluiceWith({ retry: { baseDelayMs: 50, maxDelayMs: 100, windowMs: 600 } })
    const { source, destination } = await setup(sluice, [hook(r)])
    await send(sluice.url, '/v1/track', { userId: 'u', event: 'E' }, { writeKey: source.writeKey })
    const [delivery] = await settled(sluice, destination.id, 1, 5_000)
    assert.equal(delivery!.status, 'failed')
    assert.equal(delivery!.deadLettered, true)
    assert.ok(delivery!.attemptCount >= 3)
    assert.equal(delivery!.attempts.length, delivery!.attemptCount)
    assert.equal(r.requests.length, delivery!.attemptCount)
    assert.ok(delivery!.attempts.every((a) => a.statusCode === 500 && a.responseExcerpt === 'boom'))
    const last = delivery!.attempts.at(-1)!.attemptedAt
    assert.ok(last - delivery!.firstAttemptAt! <= 600 + 150)
  })

  test('other 4xx and 3xx are not retried, and redirects are not followed', async () => {
    const target = await receiver()
    const badRequest = await receiver((_q, res) => res.writeHead(400).end())
    const redirect = await receiver((_q, res) => res.writeHead(301, { location: `${target.url}/hook` }).end())
    const sluice = await sluiceWith()
    const a = await setup(sluice, [hook(badRequest)])
    const b = await setup(sluice, [hook(redirect)])
    await send(sluice.url, '/v1/track', { userId: 'u', event: 'E' }, { writeKey: a.source.writeKey })
    await send(sluice.url, '/v1/track', { userId: 'u', event: 'E' }, { writeKey: b.source.writeKey })
    const [first] = await settled(sluice, a.destination.id, 1)
    const [second] = await settled(sluice, b.destination.id, 1)
    await sleep(200)
    assert.deepEqual([first!.status, first!.deadLettered, first!.attemptCount], ['failed', false, 1])
    assert.deepEqual(
      [second!.status, second!.attempts[0]!.errorKind, second!.attemptCount],
      ['failed', 'redirect', 1],
    )
    assert.equal(target.requests.length, 0)
  })

  test('a timeout is recorded as such and retried', async () => {
    let calls = 0
    const r = await receiver((_q, res) => {
      calls++
      if (calls > 1) res.writeHead(200).end() // the first request is left hanging
    })
    const sluice = await sluiceWith({
      retry: { baseDelayMs: 40, maxDelayMs: 80, windowMs: 10_000, requestTimeoutMs: 300 },
      deliveryLeaseMs: 2_000,
    })
    const { source, destination } = await setup(sluice, [hook(r)])
    await send(sluice.url, '/v1/track', { userId: 'u', event: 'E' }, { writeKey: source.writeKey })
    const [delivery] = await settled(sluice, destination.id, 1, 5_000)
    assert.equal(delivery!.status, 'delivered')
    assert.equal(delivery!.attempts[0]!.errorKind, 'timeout')
    assert.match(delivery!.attempts[0]!.errorText ?? '', /300 ms|timed out|timeout/i)
  })

  test('a self-signed HTTPS endpoint fails with a clear TLS error and receives no request', async () => {
    const https = await startHttpsReceiver(await selfSignedCertificate())
    cleanup.push(() => https.close())
    const sluice = await sluiceWith()
    const { source, destination } = await setup(sluice, [{ url: `${https.url}/hook`, headers: {} }])
    await send(sluice.url, '/v1/track', { userId: 'u', event: 'E' }, { writeKey: source.writeKey })
    const [delivery] = await settled(sluice, destination.id, 1)
    assert.equal(delivery!.status, 'failed')
    assert.equal(delivery!.attempts[0]!.errorKind, 'tls')
    assert.match(delivery!.attempts[0]!.errorText!, /self-signed certificate/)
    assert.equal(https.requests.length, 0)
  })
})

describe('SSRF', () => {
  test('private destinations are refused unless allowed: 127.0.0.1 and a host name resolving to loopback', async () => {
    const r = await receiver()
    const sluice = await sluiceWith({ allowPrivateDestinations: false })
    const { source, destination } = await setup(sluice, [
      { url: `${r.url}/ip`, headers: {} },
      { url: `http://localhost:${r.port}/name`, headers: {} },
      { url: `http://2130706433:${r.port}/decimal`, headers: {} },
    ])
    await send(sluice.url, '/v1/track', { userId: 'u', event: 'E' }, { writeKey: source.writeKey })
    const [delivery] = await settled(sluice, destination.id, 1)
    assert.equal(delivery!.status, 'failed')
    assert.deepEqual(
      delivery!.attempts.map((a) => a.errorKind),
      ['ssrf', 'ssrf', 'ssrf'],
    )
    assert.match(delivery!.attempts[0]!.errorText!, /SLUICE_ALLOW_PRIVATE_DESTINATIONS=true/)
    assert.equal(r.requests.length, 0)
  })
})

describe('isolation', () => {
  test('an endpoint that never answers does not delay deliveries to another', async () => {
    const blackHole = await receiver(() => {}) // accepts, never answers
    const healthy = await receiver()
    const sluice = await sluiceWith({
      retry: { baseDelayMs: 40, maxDelayMs: 80, windowMs: 60_000, requestTimeoutMs: 10_000 },
      deliveryLeaseMs: 20_000,
      deliveryConcurrency: 8,
    })
    const source = await sluice.createSource()
    for (const r of [blackHole, healthy]) {
      await sluice.store.createDestination({
        name: r === healthy ? 'healthy' : 'black hole',
        type: 'webhooks',
        enabled: true,
        sourceIds: [source.id],
        settings: { webhooks: [hook(r)], sharedSecret: null },
      })
    }
    const batch = Array.from({ length: 200 }, (_, i) => ({
      type: 'track',
      userId: 'u',
      event: 'E',
      messageId: `iso-${i}`,
    }))
    const started = Date.now()
    await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })
    assert.ok(
      await eventually(() => healthy.requests.length === 200, 6_000),
      `healthy got ${healthy.requests.length}`,
    )
    // Well before the black hole's 10 s request timeout frees a single slot.
    assert.ok(Date.now() - started < 6_000)
    // The black hole holds only its own slots.
    assert.ok(
      blackHole.requests.length <= 8,
      `black hole got ${blackHole.requests.length} concurrent requests`,
    )
  })
})
