import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { Analytics, type FailedEvent } from '../src/index.ts'
import { startServer, type TestServer } from './helpers/server.ts'

const entry = fileURLToPath(new URL('../src/index.ts', import.meta.url))

describe('close()', () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())
  const reset = (respond: TestServer['respond'] = () => ({})) => {
    server.requests.length = 0
    server.respond = respond
  }

  test('sends everything queued, the partial batch included, then resolves', async () => {
    reset()
    const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url, maxConcurrentRequests: 1 })
    for (let i = 0; i < 47; i++) analytics.track({ userId: 'u1', event: 'E', properties: { i } })
    await analytics.close()
    assert.equal(server.messages().length, 47)
    assert.deepEqual(
      server.requests.map((request) => request.body.batch.length),
      [20, 20, 7],
    )
    assert.deepEqual(analytics.stats, { pending: 0, delivered: 47, failed: 0, dropped: 0 })
  })

  test('is idempotent, and flush() after it resolves at once', async () => {
    reset()
    const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url })
    analytics.track({ userId: 'u1', event: 'E' })
    const first = analytics.close()
    assert.equal(analytics.close(), first)
    await first
    await analytics.flush()
    assert.equal(server.messages().length, 1)
  })

  test('never hangs: after its timeout a request still unanswered is aborted and reported as closed', async () => {
    reset(() => ({ delay: 5000 }))
    const analytics = new Analytics({
      writeKey: 'wk',
      endpoint: server.url,
      maxConcurrentRequests: 1,
      flushAt: 2,
    })
    const failures: FailedEvent[] = []
    analytics.on('failed', (event) => failures.push(event))
    for (let i = 0; i < 5; i++) analytics.track({ userId: 'u1', event: 'E', properties: { i } })
    const started = Date.now()
    await analytics.close({ timeout: 300 })
    const took = Date.now() - started
    assert.ok(took >= 290 && took < 3000, `close took ${took} ms`)
    // One batch was in flight, two were waiting their turn: all three are reported.
    assert.deepEqual(failures.map((event) => `${event.error.kind} ${event.messageIds.length}`).sort(), [
      'closed 1',
      'closed 2',
      'closed 2',
    ])
    assert.deepEqual(analytics.stats, { pending: 0, delivered: 0, failed: 5, dropped: 0 })
  })

  test('never hangs during a retry backoff either; the last failure is kept as the cause', async () => {
    reset(() => ({ status: 500 }))
    const analytics = new Analytics({
      writeKey: 'wk',
      endpoint: server.url,
      retryBaseDelay: 60_000,
      retryMaxDelay: 60_000,
    })
    const failures: FailedEvent[] = []
    analytics.on('failed', (event) => failures.push(event))
    analytics.track({ userId: 'u1', event: 'E' })
    const started = Date.now()
    await analytics.close({ timeout: 200 })
    assert.ok(Date.now() - started < 5000, 'did not wait out the 60 s backoff')
    assert.equal(failures[0]!.error.kind, 'closed')
    assert.match(String((failures[0]!.error.cause as Error).message), /HTTP 500/)
  })

  test('with time enough, close() waits for retries to succeed rather than dropping', async () => {
    reset((_, index) => (index < 2 ? { status: 503 } : {}))
    const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url, retryBaseDelay: 50 })
    analytics.track({ userId: 'u1', event: 'E' })
    await analytics.close()
    assert.equal(server.requests.length, 3)
    assert.equal(analytics.stats.delivered, 1)
  })

  test('the flush timer does not keep a process alive', async () => {
    // A script that queues one message (flushInterval 60 s) and never closes: it must exit now.
    const script = `
      import { Analytics } from ${JSON.stringify(entry)}
      const analytics = new Analytics({ writeKey: 'wk', endpoint: ${JSON.stringify(server.url)}, flushInterval: 60000 })
      analytics.track({ userId: 'u1', event: 'E' })
    `
    const started = Date.now()
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' })
      child.on('exit', resolve)
    })
    assert.equal(code, 0)
    assert.ok(Date.now() - started < 5000, 'exited without waiting for the timer')
  })
})
