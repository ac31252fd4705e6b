/**
 * Batching (`settings.batching`), end to end on both stores: a real Sluice, real recording HTTP
 * receivers. Flushes by count, by bytes and by wait; a batch signed over its array body, retried,
 * dead-lettered and replayed as a unit; each message showing its batch's outcome in the deliveries
 * API; `delete` notifications batched; limits refused at save time.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { Source } from '../../src/domain/sources.ts'
import { sampleValue, scrape } from '../helpers/metrics.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'
import { freshDatabase } from '../store/pg.ts'
import { opensslHmacSha1, type Receiver, type Respond, sleep, startReceiver } from './receivers.ts'

const backends = [
  { name: 'SQLite', database: async () => ({ url: undefined, drop: async () => {} }) },
  { name: 'PostgreSQL', database: async () => freshDatabase() },
]

interface Batching {
  maxEvents: number
  maxBytes: number
  maxWaitMs: number
}

for (const backend of backends) {
  describe(`batching (${backend.name})`, () => {
    let sluice: TestSluice
    let drop: () => Promise<void>
    const receivers: Receiver[] = []

    before(async () => {
      const database = await backend.database()
      drop = database.drop
      sluice = await startTestSluice({
        ...(database.url ? { databaseUrl: database.url } : {}),
        retry: { baseDelayMs: 50, maxDelayMs: 100, windowMs: 1_500 },
      })
    })
    after(async () => {
      await sluice.close()
      for (const receiver of receivers) await receiver.close()
      await drop()
    })

    /** A source, a receiver and a batching destination of that source. */
    async function setUp(
      batching: Batching,
      respond?: Respond,
      sharedSecret?: string,
      more: Record<string, unknown> = {},
    ) {
      const receiver = await startReceiver(respond)
      receivers.push(receiver)
      const source = await sluice.createSource(`batching ${receivers.length}`)
      const created = await sluice.api('POST', '/api/v1/destinations', {
        name: `batches ${receivers.length}`,
        type: 'webhooks',
        sourceIds: [source.id],
        settings: {
          webhooks: [{ url: `${receiver.url}/in` }],
          batching,
          ...(sharedSecret ? { sharedSecret } : {}),
          ...more,
        },
      })
      assert.equal(created.status, 201, JSON.stringify(created.body))
      assert.deepEqual(created.body.settings.batching, batching)
      return { receiver, source, destinationId: created.body.id as string }
    }

    async function track(source: Source, count: number, prefix: string, properties = {}) {
      const batch = Array.from({ length: count }, (_, i) => ({
        type: 'track',
        userId: `user-${i}`,
        event: 'Order Completed',
        messageId: `${prefix}-${i}`,
        properties,
      }))
      const response = await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })
      assert.equal(response.status, 200, response.text)
    }

    const bodies = (receiver: Receiver) =>
      receiver.requests.map(
        (request) => JSON.parse(request.body.toString('utf8')) as Record<string, unknown>[],
      )

    async function deliveries(destinationId: string) {
      const listed = await sluice.api('GET', `/api/v1/destinations/${destinationId}/deliveries?limit=500`)
      assert.equal(listed.status, 200)
      return listed.body.deliveries as {
        id: number
        messageId: string
        status: string
        deadLettered: boolean
        attemptCount: number
        batchId?: number
        attempts: { statusCode: number | null }[]
      }[]
    }

    test('a batch carries each member as its subscription, mapping and method make it', async () => {
      const { receiver, source } = await setUp(
        { maxEvents: 3, maxBytes: 512_000, maxWaitMs: 60_000 },
        undefined,
        'mapped-batch-secret',
        {
          subscription: 'properties.total >= 10',
          mapping: { order: { '@path': '$.messageId' }, total: { '@path': '$.properties.total' } },
          method: 'PUT',
        },
      )
      const batch = [5, 10, 20, 1, 30].map((total, i) => ({
        type: 'track',
        userId: `mapped-${i}`,
        event: 'Order Completed',
        messageId: `mapped-${i}`,
        properties: { total },
      }))
      const response = await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })
      assert.equal(response.status, 200, response.text)
      await until(
        'the batch of the three that match',
        () => receiver.requests.length,
        (n) => n >= 1,
      )
      const request = receiver.requests[0]!
      assert.equal(request.method, 'PUT')
      assert.equal(request.headers['x-signature'], opensslHmacSha1(request.body, 'mapped-batch-secret'))
      assert.deepEqual(JSON.parse(request.body.toString('utf8')), [
        { order: 'mapped-1', total: 10 },
        { order: 'mapped-2', total: 20 },
        { order: 'mapped-4', total: 30 },
      ])
    })

    test('a full batch goes at once, as a signed JSON array of delivered-shape messages', async () => {
      const { receiver, source, destinationId } = await setUp(
        { maxEvents: 10, maxBytes: 512_000, maxWaitMs: 60_000 },
        undefined,
        'batch-secret',
      )
      await track(source, 25, 'size', { total: 3 })
      await until(
        'two full batches',
        () => receiver.requests.length,
        (n) => n >= 2,
      )
      await sleep(500)
      // The 5 left over wait for more messages or for a minute: not sent yet.
      assert.equal(receiver.requests.length, 2)
      const sent = bodies(receiver)
      assert.deepEqual(
        sent.map((body) => body.length),
        [10, 10],
      )
      for (const request of receiver.requests) {
        assert.equal(request.headers['content-type'], 'application/json')
        assert.equal(request.headers['x-signature'], opensslHmacSha1(request.body, 'batch-secret'))
      }
      const first = sent[0]![0]!
      assert.deepEqual(Object.keys(first), [
        'version',
        'type',
        'userId',
        'event',
        'properties',
        'context',
        'messageId',
        'timestamp',
      ])
      const sentIds = new Set(sent.flat().map((message) => message.messageId))
      assert.equal(sentIds.size, 20, 'no message twice')
      assert.ok([...sentIds].every((id) => /^size-\d+$/.test(String(id))))
      // Each message shows its batch's outcome; the 5 waiting ones are pending in no batch yet.
      const listed = await deliveries(destinationId)
      const delivered = listed.filter((d) => d.status === 'delivered')
      assert.equal(delivered.length, 20)
      assert.equal(new Set(delivered.map((d) => d.batchId)).size, 2)
      for (const d of delivered) {
        assert.equal(d.attemptCount, 1)
        assert.deepEqual(
          d.attempts.map((a) => a.statusCode),
          [200],
        )
      }
      // The request a member shows is its batch's, byte for byte, with the batch's signature.
      const shown = await sluice.api('GET', `/api/v1/deliveries/${delivered[0]!.id}/request`)
      assert.equal(shown.status, 200)
      const carrier = receiver.requests.find((request) => request.body.toString('utf8') === shown.body.body)
      assert.ok(carrier, 'the shown body is one that was sent')
      assert.equal(shown.body.requests[0].headers['X-Signature'], carrier.headers['x-signature'])
      // The metrics count messages: a batch's success delivered ten.
      const samples = await scrape(sluice.url, sluice.adminToken)
      assert.equal(
        sampleValue(samples, 'sluice_deliveries_total', { destination: destinationId, outcome: 'delivered' }),
        20,
      )
      const waiting = listed.filter((d) => d.status === 'pending')
      assert.equal(waiting.length, 5)
      assert.ok(waiting.every((d) => d.batchId === undefined))
    })

    test('a batch filled by messages arriving one after another goes as soon as it is full', async () => {
      const { receiver, source } = await setUp({ maxEvents: 6, maxBytes: 512_000, maxWaitMs: 60_000 })
      for (let i = 0; i < 6; i++) {
        await track(source, 1, `trickle-${i}`)
        await sleep(5)
      }
      // Well before the minute's wait: the batch is full.
      await until(
        'the full batch',
        () => receiver.requests.length,
        (n) => n === 1,
        3_000,
      )
      assert.equal(bodies(receiver)[0]!.length, 6)
    })

    test('a batch goes when its next message would take it over maxBytes', async () => {
      const maxBytes = 1_000
      const { receiver, source } = await setUp({ maxEvents: 1_000, maxBytes, maxWaitMs: 60_000 })
      await track(source, 20, 'bytes', { note: 'x'.repeat(100) })
      await until(
        'byte-full batches',
        () => receiver.requests.length,
        (n) => n >= 3,
      )
      await sleep(300)
      const sent = bodies(receiver)
      const perMessage = JSON.stringify(sent[0]![0]).length
      const fit = Math.floor((maxBytes - 2 + 1) / (perMessage + 1))
      assert.ok(fit >= 2, `${perMessage}-byte messages must fit several to a batch`)
      for (const request of receiver.requests) assert.ok(request.body.length <= maxBytes)
      assert.deepEqual(
        sent.map((body) => body.length),
        Array.from({ length: Math.floor(20 / fit) }, () => fit),
      )
    })

    test('an unfilled batch goes once its oldest message waited maxWaitMs', async () => {
      const { receiver, source } = await setUp({ maxEvents: 100, maxBytes: 512_000, maxWaitMs: 400 })
      const sentAt = Date.now()
      await track(source, 3, 'wait')
      await sleep(200)
      assert.equal(receiver.requests.length, 0, 'not before the wait is over')
      await until(
        'the batch',
        () => receiver.requests.length,
        (n) => n === 1,
        5_000,
      )
      const elapsed = Date.now() - sentAt
      assert.ok(elapsed >= 400, `sent after ${elapsed} ms`)
      assert.deepEqual(
        bodies(receiver)[0]!.map((message) => message.messageId),
        ['wait-0', 'wait-1', 'wait-2'],
      )
    })

    test('a failing batch is retried as a unit, with the same bytes, and every member shows each attempt', async () => {
      let answered = 0
      const { receiver, source, destinationId } = await setUp(
        { maxEvents: 5, maxBytes: 512_000, maxWaitMs: 60_000 },
        (_req, res) => res.writeHead(++answered <= 2 ? 503 : 200).end(),
      )
      await track(source, 5, 'retry')
      await until(
        'three attempts',
        () => receiver.requests.length,
        (n) => n >= 3,
      )
      const [one, two, three] = receiver.requests
      assert.ok(one!.body.equals(two!.body) && two!.body.equals(three!.body), 'a retry sends the same bytes')
      const listed = await until(
        'every member delivered',
        () => deliveries(destinationId),
        (list) => list.length === 5 && list.every((d) => d.status === 'delivered'),
      )
      assert.equal(new Set(listed.map((d) => d.batchId)).size, 1)
      for (const d of listed) {
        assert.equal(d.attemptCount, 3)
        assert.deepEqual(
          d.attempts.map((a) => a.statusCode),
          [503, 503, 200],
        )
      }
      // The destination's figures count the batch's requests: three, one of them a success.
      const stats = await sluice.api('GET', `/api/v1/destinations/${destinationId}/stats`)
      assert.equal(stats.body.delivered, 5)
      assert.notEqual(stats.body.latencyP50Ms, null)
      const from = new Date(Date.now() - 3_600_000).toISOString()
      const to = new Date(Date.now() + 60_000).toISOString()
      const series = async () =>
        (
          await sluice.api(
            'GET',
            `/api/v1/destinations/${destinationId}/stats/series?from=${from}&to=${to}&step=300`,
          )
        ).body as { points: { succeeded: number; failed: number }[] }
      const sum = (body: Awaited<ReturnType<typeof series>>, key: 'succeeded' | 'failed') =>
        body.points.reduce((total, point) => total + point[key], 0)
      const live = await series()
      assert.deepEqual([sum(live, 'succeeded'), sum(live, 'failed')], [1, 2])
      await sluice.store.rollUpDeliveries(Date.now() + 10 * 60_000)
      assert.deepEqual(await series(), live, 'the same once rolled up')
    })

    test('a batch is dead-lettered as a unit, and replaying one member replays the whole batch', async () => {
      let healthy = false
      const { receiver, source, destinationId } = await setUp(
        { maxEvents: 4, maxBytes: 512_000, maxWaitMs: 60_000 },
        (_req, res) => res.writeHead(healthy ? 200 : 503).end(),
      )
      await track(source, 4, 'dead')
      const dead = await until(
        'the batch dead-lettered',
        () => deliveries(destinationId),
        (list) => list.length === 4 && list.every((d) => d.status === 'failed'),
        10_000,
      )
      assert.ok(dead.every((d) => d.deadLettered && d.batchId === dead[0]!.batchId))
      const stats = await sluice.api('GET', `/api/v1/destinations/${destinationId}/stats`)
      assert.equal(stats.body.deadLettered, 4)
      const attemptsBefore = receiver.requests.length
      healthy = true
      const replayed = await sluice.api('POST', `/api/v1/deliveries/${dead[0]!.id}/replay`)
      assert.ok(replayed.status < 300, JSON.stringify(replayed.body))
      const after = await until(
        'the batch delivered',
        () => deliveries(destinationId),
        (list) => list.every((d) => d.status === 'delivered'),
      )
      assert.equal(receiver.requests.length, attemptsBefore + 1, 'the replay is one request')
      assert.deepEqual(
        bodies(receiver)
          .at(-1)!
          .map((message) => message.messageId)
          .sort(),
        ['dead-0', 'dead-1', 'dead-2', 'dead-3'],
      )
      assert.ok(after.every((d) => d.batchId === dead[0]!.batchId && !d.deadLettered))
    })

    test("a deletion request takes the user's message out of a batch still retrying", async () => {
      let healthy = false
      const { receiver, source, destinationId } = await setUp(
        { maxEvents: 10, maxBytes: 512_000, maxWaitMs: 100 },
        (_req, res) => res.writeHead(healthy ? 200 : 503).end(),
      )
      await track(source, 2, 'erase')
      await until(
        'the batch tried',
        () => receiver.requests.length,
        (n) => n >= 1,
      )
      const regulation = await sluice.api('POST', '/api/v1/regulations', {
        regulationType: 'DELETE_ONLY',
        subjectType: 'USER_ID',
        subjectIds: ['user-0'],
        sourceIds: [source.id],
      })
      assert.equal(regulation.status, 201, JSON.stringify(regulation.body))
      await until(
        "the user's delivery cancelled",
        async () => (await deliveries(destinationId)).map((d) => d.messageId),
        (ids) => !ids.includes('erase-0'),
      )
      healthy = true
      await until(
        'the batch delivered',
        async () => (await deliveries(destinationId)).find((d) => d.messageId === 'erase-1')?.status,
        (status) => status === 'delivered',
      )
      const delivered = receiver.requests.filter((request) =>
        request.body.toString('utf8').includes('"erase-1"'),
      )
      const last = JSON.parse(delivered.at(-1)!.body.toString('utf8')) as { messageId: string }[]
      assert.deepEqual(
        last.map((message) => message.messageId),
        ['erase-1'],
      )
    })

    test('turning batching off: batches already formed finish as batches, new messages go alone', async () => {
      let healthy = false
      const { receiver, source, destinationId } = await setUp(
        { maxEvents: 3, maxBytes: 512_000, maxWaitMs: 60_000 },
        (_req, res) => res.writeHead(healthy ? 200 : 503).end(),
      )
      await track(source, 3, 'switch')
      await until(
        'the batch tried',
        () => receiver.requests.length,
        (n) => n >= 1,
      )
      const off = await sluice.api('PATCH', `/api/v1/destinations/${destinationId}`, {
        settings: { batching: null },
      })
      assert.equal(off.status, 200)
      healthy = true
      await track(source, 1, 'alone')
      await until(
        'every delivery delivered',
        () => deliveries(destinationId),
        (list) => list.length === 4 && list.every((d) => d.status === 'delivered'),
      )
      const received = receiver.requests.map(
        (request) => JSON.parse(request.body.toString('utf8')) as unknown,
      )
      const arrays = received.filter((body) => Array.isArray(body)) as { messageId: string }[][]
      assert.deepEqual(
        arrays
          .at(-1)!
          .map((message) => message.messageId)
          .sort(),
        ['switch-0', 'switch-1', 'switch-2'],
      )
      assert.ok(
        received.some(
          (body) => !Array.isArray(body) && (body as { messageId: string }).messageId === 'alone-0',
        ),
        'the new message went alone, as an object',
      )
    })

    test('a message that cannot be shaped fails alone; the others go in their batch', async () => {
      const { receiver, source, destinationId } = await setUp({
        maxEvents: 3,
        maxBytes: 512_000,
        maxWaitMs: 300,
      })
      // Stored without an event name (the Tracking API would refuse it): it can never be delivered.
      await sluice.store.ingest([
        {
          sourceId: source.id,
          messageId: 'unshapeable',
          type: 'track',
          receivedAt: Date.now(),
          routeTo: ['webhooks'],
          payloadJson: JSON.stringify({ type: 'track', userId: 'u', messageId: 'unshapeable' }),
        },
      ])
      await track(source, 2, 'shapeable')
      const listed = await until(
        'every delivery final',
        () => deliveries(destinationId),
        (list) => list.length === 3 && list.every((d) => d.status === 'delivered' || d.status === 'failed'),
      )
      const bad = listed.find((d) => d.messageId === 'unshapeable')!
      assert.equal(bad.status, 'failed')
      assert.equal(bad.attemptCount, 1)
      const good = listed.filter((d) => d.messageId !== 'unshapeable')
      assert.ok(good.every((d) => d.status === 'delivered' && d.batchId === good[0]!.batchId))
      assert.notEqual(bad.batchId, good[0]!.batchId)
      assert.equal(receiver.requests.length, 1, 'the invalid message sends nothing')
      assert.deepEqual(
        bodies(receiver)[0]!
          .map((message) => message.messageId)
          .sort(),
        ['shapeable-0', 'shapeable-1'],
      )
    })

    test('delete notifications are batched too', async () => {
      const { receiver, source } = await setUp({ maxEvents: 2, maxBytes: 512_000, maxWaitMs: 60_000 })
      await track(source, 2, 'before-delete')
      await until(
        'the calls',
        () => receiver.requests.length,
        (n) => n === 1,
      )
      const regulation = await sluice.api('POST', '/api/v1/regulations', {
        regulationType: 'DELETE_ONLY',
        subjectType: 'USER_ID',
        subjectIds: ['user-0', 'user-1'],
        sourceIds: [source.id],
      })
      assert.equal(regulation.status, 201, JSON.stringify(regulation.body))
      await until(
        'the notifications',
        () => receiver.requests.length,
        (n) => n === 2,
      )
      const notifications = bodies(receiver)[1]!
      assert.deepEqual(notifications.map((message) => [message.type, message.userId]).sort(), [
        ['delete', 'user-0'],
        ['delete', 'user-1'],
      ])
      assert.deepEqual(Object.keys(notifications[0]!), ['type', 'userId', 'timestamp'])
      await until(
        'the regulation finished',
        async () => (await sluice.api('GET', `/api/v1/regulations/${regulation.body.id}`)).body.status,
        (status) => status === 'FINISHED',
      )
    })
  })
}

describe('batching limits are checked when settings are saved', () => {
  let sluice: TestSluice
  let sourceId = ''
  before(async () => {
    sluice = await startTestSluice()
    sourceId = (await sluice.createSource('limits')).id
  })
  after(() => sluice.destroy())

  const create = (batching: unknown) =>
    sluice.api('POST', '/api/v1/destinations', {
      name: 'limits',
      type: 'webhooks',
      sourceIds: [sourceId],
      settings: { webhooks: [{ url: 'https://example.com/in' }], batching },
    })
  const valid = { maxEvents: 100, maxBytes: 512_000, maxWaitMs: 1_000 }

  const refused: [string, unknown, string, RegExp][] = [
    ['too many events', { ...valid, maxEvents: 1_001 }, '/settings/batching/maxEvents', /1 to 1000/],
    ['no events', { ...valid, maxEvents: 0 }, '/settings/batching/maxEvents', /1 to 1000/],
    ['too many bytes', { ...valid, maxBytes: 512_001 }, '/settings/batching/maxBytes', /1 to 512000/],
    ['a negative wait', { ...valid, maxWaitMs: -1 }, '/settings/batching/maxWaitMs', /0 to 60000/],
    ['too long a wait', { ...valid, maxWaitMs: 60_001 }, '/settings/batching/maxWaitMs', /0 to 60000/],
    ['a fraction', { ...valid, maxEvents: 1.5 }, '/settings/batching/maxEvents', /whole number/],
    ['a missing limit', { maxEvents: 10, maxBytes: 1_000 }, '/settings/batching/maxWaitMs', /required/],
  ]
  for (const [what, batching, field, message] of refused) {
    test(`refuses ${what} with a 400 naming the field`, async () => {
      const response = await create(batching)
      assert.equal(response.status, 400, JSON.stringify(response.body))
      assert.equal(response.body.error.field, field)
      assert.match(response.body.error.message, message)
    })
  }

  test('refuses an unknown member, and a batching that is not an object', async () => {
    const unknown = await create({ ...valid, maxCount: 3 })
    assert.equal(unknown.status, 400)
    assert.match(JSON.stringify(unknown.body), /maxCount/)
    const text = await create('100')
    assert.equal(text.status, 400)
    assert.match(JSON.stringify(text.body), /batching/)
  })

  test('valid limits are kept on update, changed when given, and null turns batching off', async () => {
    const created = await create(valid)
    assert.equal(created.status, 201)
    const id = created.body.id as string
    const renamed = await sluice.api('PATCH', `/api/v1/destinations/${id}`, { name: 'renamed' })
    assert.deepEqual(renamed.body.settings.batching, valid)
    const kept = await sluice.api('PATCH', `/api/v1/destinations/${id}`, {
      settings: { webhooks: [{ url: 'https://example.com/other' }] },
    })
    assert.deepEqual(kept.body.settings.batching, valid)
    const changed = await sluice.api('PATCH', `/api/v1/destinations/${id}`, {
      settings: { batching: { ...valid, maxEvents: 1 } },
    })
    assert.equal(changed.body.settings.batching.maxEvents, 1)
    const off = await sluice.api('PATCH', `/api/v1/destinations/${id}`, { settings: { batching: null } })
    assert.equal(off.status, 200)
    assert.equal(off.body.settings.batching, undefined)
  })
})
