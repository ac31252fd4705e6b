import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Analytics, type DroppedEvent } from '../src/index.ts'
import { startServer, type TestServer, until } from './helpers/server.ts'

describe('bounded queue', () => {
  let server: TestServer
  // Every answer waits here until the test releases it, so messages pile up in memory.
  const held: (() => void)[] = []
  /** Answers the oldest held request. */
  const release = () => held.shift()?.()
  before(async () => {
    server = await startServer(() => new Promise((resolve) => held.push(() => resolve({}))))
  })
  after(() => {
    while (held.length > 0) release()
    return server.close()
  })

  test('maxQueueSize: calls past it are dropped, counted and announced; later calls fit again', async () => {
    const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url, maxQueueSize: 10, flushAt: 5 })
    const dropped: DroppedEvent[] = []
    analytics.on('dropped', (event) => dropped.push(event))
    const ids: string[] = []
    for (let i = 0; i < 15; i++) ids.push(analytics.track({ userId: 'u1', event: 'E', properties: { i } }))
    // Still ten held while the first batch is in flight: the server has not answered.
    await server.waitForRequests(1)
    assert.deepEqual(
      dropped.map((event) => [event.messageId, event.type, event.reason, event.total]),
      ids.slice(10).map((id, n) => [id, 'track', 'queue_full', n + 1]),
    )
    assert.deepEqual(analytics.stats, { pending: 10, delivered: 0, failed: 0, dropped: 5 })
    await until(
      () => held.length === 2,
      2000,
      () => 'both batches in flight',
    )
    release()
    await until(
      () => analytics.stats.pending === 5,
      2000,
      () => 'the first batch to be released',
    )
    release()
    await until(
      () => analytics.stats.pending === 0,
      2000,
      () => 'the second batch',
    )
    const later = analytics.track({ userId: 'u1', event: 'After' })
    const flushed = analytics.flush()
    await server.waitForRequests(3)
    await until(
      () => held.length === 1,
      2000,
      () => 'the third request',
    )
    release()
    await flushed
    const received = server.messages().map((message) => message.messageId)
    assert.deepEqual(received, [...ids.slice(0, 10), later])
    assert.deepEqual(analytics.stats, { pending: 0, delivered: 11, failed: 0, dropped: 5 })
    await analytics.close()
  })

  test('maxQueueBytes bounds the bytes held the same way', async () => {
    server.requests.length = 0
    const analytics = new Analytics({
      writeKey: 'wk',
      endpoint: server.url,
      maxQueueBytes: 10_000,
      flushAt: 1000,
    })
    let dropped = 0
    analytics.on('dropped', () => dropped++)
    const filler = 'x'.repeat(900)
    for (let i = 0; i < 20; i++) analytics.track({ userId: 'u1', event: 'E', properties: { filler } })
    const { pending } = analytics.stats
    const closed = analytics.close()
    await until(
      () => held.length === 1,
      2000,
      () => 'the request',
    )
    release()
    await closed
    // All messages have the same size: as many as fit in 10,000 bytes were kept.
    const size = Buffer.byteLength(JSON.stringify(server.messages()[0]))
    assert.equal(pending, Math.floor(10_000 / size))
    assert.equal(dropped, 20 - pending)
    assert.equal(server.messages().length, pending)
  })
})
