import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { gunzipSync } from 'node:zlib'
import {
  Analytics,
  type AnalyticsOptions,
  type FailedEvent,
  type FetchLike,
  type RetryEvent,
} from '../src/index.ts'
import { startServer, type TestServer } from './helpers/server.ts'

// The same scenarios over both HTTP clients: node:http (the default in Node) and fetch (the
// default elsewhere, and what a caller's `fetch` option plugs into).
const clients: [string, Partial<AnalyticsOptions>][] = [
  ['node:http', {}],
  ['fetch', { fetch: globalThis.fetch as FetchLike }],
]

for (const [name, choice] of clients) {
  describe(`transport: ${name}`, () => {
    let server: TestServer
    before(async () => {
      server = await startServer()
    })
    after(() => server.close())
    const make = (options: Partial<AnalyticsOptions> = {}) => {
      const analytics = new Analytics({
        writeKey: 'wk',
        endpoint: server.url,
        retryBaseDelay: 5,
        ...choice,
        ...options,
      })
      const retries: RetryEvent[] = []
      const failures: FailedEvent[] = []
      analytics.on('retry', (event) => retries.push(event))
      analytics.on('failed', (event) => failures.push(event))
      return { analytics, retries, failures }
    }
    const reset = (respond: TestServer['respond'] = () => ({})) => {
      server.requests.length = 0
      server.respond = respond
    }

    test('POSTs the batch with auth, JSON content type and an exact content length', async () => {
      reset()
      const { analytics } = make()
      const id = analytics.track({ userId: 'u1', event: 'Ünïcödé' })
      await analytics.close()
      const [request] = server.requests
      assert.equal(request!.headers.authorization, `Basic ${btoa('wk:')}`)
      assert.equal(request!.headers['content-type'], 'application/json')
      assert.equal(Number(request!.headers['content-length']), request!.raw.length)
      assert.equal(request!.body.batch[0]!.messageId, id)
      assert.equal(request!.body.batch[0]!.event, 'Ünïcödé')
    })

    test('gzip bodies', async () => {
      reset()
      const { analytics } = make({ gzip: true })
      analytics.track({ userId: 'u1', event: 'E' })
      await analytics.close()
      const [request] = server.requests
      assert.equal(request!.headers['content-encoding'], 'gzip')
      assert.equal(Number(request!.headers['content-length']), request!.raw.length)
      assert.equal(JSON.parse(gunzipSync(request!.raw).toString()).batch[0].event, 'E')
    })

    test('timeouts and dropped connections are retried', async () => {
      reset((_, index) => (index === 0 ? { delay: 500 } : index === 1 ? { destroy: true } : {}))
      const { analytics, retries } = make({ timeout: 100 })
      analytics.track({ userId: 'u1', event: 'E' })
      await analytics.close()
      assert.deepEqual(
        retries.map((event) => event.error.kind),
        ['timeout', 'network'],
      )
      assert.equal(analytics.stats.delivered, 1)
    })

    test('close() aborts a hanging request when its time is up', async () => {
      reset(() => ({ delay: 3000 }))
      const { analytics, failures } = make()
      analytics.track({ userId: 'u1', event: 'E' })
      const started = Date.now()
      await analytics.close({ timeout: 150 })
      assert.ok(Date.now() - started < 2000, 'did not wait for the 3 s answer')
      assert.equal(failures[0]!.error.kind, 'closed')
    })
  })
}

describe('client choice', () => {
  test('without process.getBuiltinModule (Node < 20.16, edge runtimes) the global fetch is used', async () => {
    const server = await startServer()
    const script = `
      delete process.getBuiltinModule
      const { Analytics } = await import(${JSON.stringify(fileURLToPath(new URL('../src/index.ts', import.meta.url)))})
      const analytics = new Analytics({ writeKey: 'wk', endpoint: ${JSON.stringify(server.url)}, debug: true })
      analytics.track({ userId: 'u1', event: 'E' })
      await analytics.close()
    `
    const { stderr } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script])
    await server.close()
    assert.match(stderr, /sending to http:\/\/127\.0\.0\.1:\d+\/v1\/batch with fetch,/)
    assert.match(stderr, /1 delivered/)
    assert.equal(server.messages().length, 1)
  })
})

describe('a custom fetch', () => {
  test('is used, and one that ignores its signal cannot make a timeout or close() hang', async () => {
    const urls: string[] = []
    const never: FetchLike = (url) => {
      urls.push(url)
      return new Promise(() => {})
    }
    const analytics = new Analytics({
      writeKey: 'wk',
      endpoint: 'http://example.test',
      fetch: never,
      timeout: 50,
      retryBaseDelay: 5,
    })
    const retries: RetryEvent[] = []
    analytics.on('retry', (event) => retries.push(event))
    analytics.track({ userId: 'u1', event: 'E' })
    const started = Date.now()
    await analytics.close({ timeout: 400 })
    assert.ok(Date.now() - started < 2500, 'close() kept to its time limit')
    assert.ok(retries.length >= 2 && retries.every((event) => event.error.kind === 'timeout'))
    assert.equal(urls[0], 'http://example.test/v1/batch')
    assert.equal(analytics.stats.failed, 1)
  })
})
