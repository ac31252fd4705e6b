import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { after, before, describe, test } from 'node:test'
import {
  Analytics,
  type AnalyticsOptions,
  DeliveryError,
  type FailedEvent,
  type RetryEvent,
} from '../src/index.ts'
import { sleep, startServer, type TestServer, until } from './helpers/server.ts'

/** Fast retries so the tests do not wait on real backoff. */
const FAST = { retryBaseDelay: 10, retryMaxDelay: 40 } as const

function client(server: TestServer, options: Partial<AnalyticsOptions> = {}) {
  const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url, ...FAST, ...options })
  const retries: RetryEvent[] = []
  const failures: FailedEvent[] = []
  analytics.on('retry', (event) => retries.push(event))
  analytics.on('failed', (event) => failures.push(event))
  return { analytics, retries, failures }
}

/** Port with nothing listening: connecting to it is refused. */
async function closedPort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return port
}

describe('retry policy', () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())
  const reset = (respond: TestServer['respond']) => {
    server.requests.length = 0
    server.concurrentDuplicates = 0
    server.respond = respond
  }

  test('500 is retried with the same messageIds, a fresh sentAt, and delivered', async () => {
    reset((_, index) =>
      index === 0 ? { status: 500, body: { error: { message: 'database is restarting' } } } : {},
    )
    const { analytics, retries } = client(server)
    const delivered: number[] = []
    analytics.on('delivered', (event) => delivered.push(event.attempts))
    const ids = [analytics.track({ userId: 'u1', event: 'A' }), analytics.track({ userId: 'u1', event: 'B' })]
    await analytics.flush()
    const [first, second] = server.requests
    assert.equal(server.requests.length, 2)
    assert.deepEqual(
      first!.body.batch.map((message) => message.messageId),
      ids,
    )
    assert.deepEqual(second!.body.batch, first!.body.batch, 'the retry sends the very same messages')
    assert.ok(Date.parse(second!.body.sentAt!) >= Date.parse(first!.body.sentAt!))
    assert.equal(retries.length, 1)
    assert.equal(retries[0]!.error.kind, 'http')
    assert.equal(retries[0]!.error.status, 500)
    assert.match(retries[0]!.error.message, /HTTP 500: database is restarting/)
    assert.deepEqual(retries[0]!.messageIds, ids)
    assert.deepEqual(delivered, [2])
    assert.deepEqual(analytics.stats, { pending: 0, delivered: 2, failed: 0, dropped: 0 })
    await analytics.close()
  })

  test('503 with Retry-After waits what the server asked, not the backoff', async () => {
    reset((_, index) => (index === 0 ? { status: 503, headers: { 'retry-after': '1' } } : {}))
    const { analytics, retries } = client(server)
    analytics.track({ userId: 'u1', event: 'A' })
    await analytics.flush()
    const gap = server.requests[1]!.at - server.requests[0]!.at
    assert.ok(gap >= 950, `retried after ${gap} ms`)
    assert.equal(retries[0]!.delay, 1000)
    await analytics.close()
  })

  test('429 with Retry-After holds every batch, including ones queued later', async () => {
    reset((_, index) => (index === 0 ? { status: 429, headers: { 'retry-after': '1' } } : {}))
    const { analytics, retries } = client(server, { flushAt: 1 })
    analytics.track({ userId: 'u1', event: 'A' })
    await until(
      () => retries.length === 1,
      2000,
      () => 'the retry event',
    )
    const limitedAt = Date.now()
    analytics.track({ userId: 'u1', event: 'B' })
    await analytics.flush()
    const b = server.requests.find((request) => request.body.batch[0]!.event === 'B')!
    assert.ok(b.at - limitedAt >= 900, `B went ${b.at - limitedAt} ms after the 429`)
    assert.equal(server.requests.length, 3)
    await analytics.close()
  })

  test('429 without Retry-After and 408 are retried with backoff', async () => {
    for (const status of [429, 408]) {
      reset((_, index) => (index < 2 ? { status } : {}))
      const { analytics, retries } = client(server)
      analytics.track({ userId: 'u1', event: 'A' })
      await analytics.flush()
      assert.equal(server.requests.length, 3, `${status}: 2 retries`)
      assert.deepEqual(
        retries.map((event) => [event.error.status, event.attempt]),
        [
          [status, 1],
          [status, 2],
        ],
      )
      assert.equal(analytics.stats.delivered, 1)
      await analytics.close()
    }
  })

  test('a dropped connection (network error) is retried', async () => {
    reset((_, index) => (index === 0 ? { destroy: true } : {}))
    const { analytics, retries } = client(server)
    analytics.track({ userId: 'u1', event: 'A' })
    await analytics.flush()
    assert.equal(server.requests.length, 2)
    assert.equal(retries[0]!.error.kind, 'network')
    assert.equal(analytics.stats.delivered, 1)
    await analytics.close()
  })

  test('connection refused: retried up to maxRetries, then failed with the reason', async () => {
    const port = await closedPort()
    const analytics = new Analytics({
      writeKey: 'wk',
      endpoint: `http://127.0.0.1:${port}`,
      ...FAST,
      maxRetries: 2,
    })
    const failures: FailedEvent[] = []
    const retries: RetryEvent[] = []
    analytics.on('failed', (event) => failures.push(event))
    analytics.on('retry', (event) => retries.push(event))
    const id = analytics.track({ userId: 'u1', event: 'A' })
    await analytics.flush()
    assert.equal(retries.length, 2)
    assert.equal(failures.length, 1)
    assert.deepEqual(failures[0]!.messageIds, [id])
    assert.equal(failures[0]!.attempts, 3)
    assert.ok(failures[0]!.error instanceof DeliveryError)
    assert.equal(failures[0]!.error.kind, 'network')
    assert.match(failures[0]!.error.message, /ECONNREFUSED/)
    assert.deepEqual(analytics.stats, { pending: 0, delivered: 0, failed: 1, dropped: 0 })
    await analytics.close()
  })

  test('a timeout aborts the request and retries it; the two never overlap', async () => {
    reset((_, index) => (index === 0 ? { delay: 4000 } : {}))
    const { analytics, retries } = client(server, { timeout: 150 })
    const started = Date.now()
    analytics.track({ userId: 'u1', event: 'A' })
    await analytics.flush()
    assert.ok(Date.now() - started < 3000, 'did not wait for the slow answer')
    assert.equal(retries[0]!.error.kind, 'timeout')
    assert.match(retries[0]!.error.message, /150 ms/)
    assert.equal(server.requests.length, 2)
    assert.equal(server.concurrentDuplicates, 0)
    assert.equal(analytics.stats.delivered, 1)
    await analytics.close()
  })

  test('400 and other 4xx are final: one request, a failed event with the server message', async () => {
    for (const status of [400, 401, 413]) {
      reset(() => ({ status, body: { error: { code: 'bad', message: `refused with ${status}` } } }))
      const { analytics, retries, failures } = client(server)
      analytics.track({ userId: 'u1', event: 'A' })
      analytics.track({ userId: 'u1', event: 'B' })
      await analytics.flush()
      await sleep(100)
      assert.equal(server.requests.length, 1, `${status} is not retried`)
      assert.equal(retries.length, 0)
      assert.equal(failures.length, 1)
      assert.equal(failures[0]!.messageIds.length, 2)
      assert.equal(failures[0]!.error.status, status)
      assert.equal(failures[0]!.error.retryable, false)
      assert.equal(failures[0]!.error.message, `HTTP ${status}: refused with ${status}`)
      await analytics.close()
    }
  })

  test('retries stop at maxRetries; a Retry-After beyond maxRetryDuration fails at once', async () => {
    reset(() => ({ status: 500, body: 'oops' }))
    const first = client(server, { maxRetries: 3 })
    first.analytics.track({ userId: 'u1', event: 'A' })
    await first.analytics.flush()
    assert.equal(server.requests.length, 4)
    assert.equal(first.failures[0]!.attempts, 4)
    assert.equal(first.failures[0]!.error.message, 'HTTP 500: oops')
    await first.analytics.close()

    reset(() => ({ status: 503, headers: { 'retry-after': '60' } }))
    const second = client(server, { maxRetryDuration: 5000 })
    const started = Date.now()
    second.analytics.track({ userId: 'u1', event: 'A' })
    await second.analytics.flush()
    assert.ok(Date.now() - started < 4000, 'did not wait out the 60 s Retry-After')
    assert.equal(server.requests.length, 1)
    assert.equal(second.failures[0]!.error.status, 503)
    await second.analytics.close()
  })

  test('under slow answers and timeouts no batch is ever in two requests at once, and all arrive', async () => {
    reset((_, index) => ({ delay: index % 3 === 0 ? 120 : index % 7 }))
    const { analytics, retries } = client(server, { flushAt: 5, timeout: 60, maxConcurrentRequests: 4 })
    const ids = new Set<string>()
    for (let i = 0; i < 200; i++)
      ids.add(analytics.track({ userId: `u${i % 7}`, event: 'E', properties: { i } }))
    await analytics.flush()
    assert.ok(retries.length > 0, 'some attempts timed out')
    assert.equal(server.concurrentDuplicates, 0)
    const received = new Set(server.messages().map((message) => message.messageId))
    assert.deepEqual([...received].sort(), [...ids].sort())
    // Every request for a batch carries exactly the batch's messages (retries included).
    const bodies = new Map<string, string>()
    for (const request of server.requests) {
      const key = request.body.batch[0]!.messageId
      const members = request.body.batch.map((message) => message.messageId).join()
      assert.equal(bodies.get(key) ?? members, members)
      bodies.set(key, members)
    }
    assert.equal(bodies.size, 40)
    assert.deepEqual(analytics.stats, { pending: 0, delivered: 200, failed: 0, dropped: 0 })
    await analytics.close()
  })

  test('control: the overlap detector used above does see two concurrent sends of one message', async () => {
    reset(() => ({ delay: 100 }))
    const body = JSON.stringify({ batch: [{ type: 'track', messageId: 'same', userId: 'u', event: 'E' }] })
    const post = () =>
      fetch(`${server.url}/v1/batch`, { method: 'POST', body }).then((response) => response.text())
    await Promise.all([post(), post()])
    assert.equal(server.concurrentDuplicates, 1)
  })
})
