import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { setImmediate } from 'node:timers/promises'
import { type AttemptResult, WebhookSender } from '../../src/deliver/http-sender.ts'
import { type AttemptVerdict, classifyAttempt } from '../../src/deliver/retry-policy.ts'
import { serializeMessage, shapeMessage } from '../../src/deliver/shape.ts'
import { signBody, verifySignature } from '../../src/deliver/signing.ts'
import type { Resolver } from '../../src/deliver/ssrf.ts'
import {
  eventually,
  opensslHmacSha1,
  type Receiver,
  selfSignedCertificate,
  sleep,
  startHttpsReceiver,
  startReceiver,
  unusedPort,
} from './receivers.ts'

const body = serializeMessage(
  shapeMessage({
    type: 'track',
    userId: 'jürgen',
    event: 'Order Completed 🎉',
    properties: { total: 42 },
    context: { ip: '203.0.113.1' },
    messageId: 'msg-1',
    timestamp: '2026-01-31T12:00:00.000Z',
  }),
)

/** Receivers and senders made by a test, closed after it. */
const cleanup: Array<{ close(): Promise<void> }> = []
async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const started = await startReceiver(...args)
  cleanup.push(started)
  return started
}
function sender(options: ConstructorParameters<typeof WebhookSender>[0] = {}): WebhookSender {
  const created = new WebhookSender({ allowPrivate: true, timeoutMs: 1000, ...options })
  cleanup.push(created)
  return created
}
async function closeAll(): Promise<void> {
  await Promise.all(cleanup.splice(0).map((item) => item.close()))
}

describe('WebhookSender against real HTTP receivers', { concurrency: false }, () => {
  after(closeAll)

  test('200: POST with User-Agent, Content-Type, X-Signature, static headers and the exact body', async () => {
    const target = await receiver((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks'),
    )
    const secret = 'whsec_🔑_secret'
    const result = await sender().send({
      url: `${target.url}/hooks/in?source=sluice`,
      headers: { Authorization: 'Bearer abc', 'X-Tenant': 'acme' },
      body,
      signatureHeaders: ['x-signature', signBody(body, secret)],
    })

    assert.equal(result.statusCode, 200)
    assert.equal(classifyAttempt(result), 'success')
    assert.equal(result.errorKind, undefined)
    assert.equal(result.responseExcerpt, 'thanks')
    assert.ok(result.latencyMs >= 0 && result.latencyMs < 5000)
    assert.ok(Math.abs(result.attemptedAt - Date.now()) < 5000)
    assert.equal(result.url, `${target.url}/hooks/in?source=sluice`)

    assert.equal(target.requests.length, 1)
    const [request] = target.requests
    assert.ok(request)
    assert.equal(request.method, 'POST')
    assert.equal(request.url, '/hooks/in?source=sluice')
    assert.equal(request.headers['user-agent'], 'Sluice/1.0')
    assert.equal(request.headers['content-type'], 'application/json')
    assert.equal(request.headers['content-length'], String(body.length))
    assert.equal(request.headers.authorization, 'Bearer abc')
    assert.equal(request.headers['x-tenant'], 'acme')
    assert.ok(request.rawHeaders.includes('X-Tenant'), 'static header names keep their case')
    assert.deepEqual(request.body, body, 'exact bytes')
    // The signature, checked by an independent HMAC implementation and by the receiver helper.
    assert.equal(request.headers['x-signature'], opensslHmacSha1(request.body, secret))
    assert.equal(verifySignature(request.body, request.headers['x-signature'], secret), true)
  })

  test('no secret: no X-Signature; static headers cannot replace Sluice headers', async () => {
    const target = await receiver()
    const result = await sender().send({
      url: `${target.url}/`,
      headers: { 'user-agent': 'evil/6.6', 'Content-Type': 'text/plain', 'X-Signature': 'forged', Host: 'x' },
      body,
    })
    assert.equal(result.statusCode, 200)
    const headers = target.requests[0]?.headers
    assert.equal(headers?.['user-agent'], 'Sluice/1.0')
    assert.equal(headers?.['content-type'], 'application/json')
    assert.equal(headers?.['x-signature'], undefined)
    assert.equal(headers?.host, `127.0.0.1:${target.port}`)
  })

  test('keep-alive: attempts to one origin reuse their connection', async () => {
    const target = await receiver()
    const client = sender()
    for (let i = 0; i < 10; i++) {
      assert.equal((await client.send({ url: `${target.url}/n${i}`, body })).statusCode, 200)
      await setImmediate() // undici marks the socket idle on the next turn
    }
    assert.equal(target.requests.length, 10)
    assert.equal(target.connections, 1)
    // Back to back, a second socket may open while the first is being released; never more.
    const busy = await receiver()
    for (let i = 0; i < 20; i++) assert.equal((await client.send({ url: busy.url, body })).statusCode, 200)
    assert.ok(busy.connections <= 2, `${busy.connections} connections`)
  })

  test('500: retryable, with the response excerpt', async () => {
    const target = await receiver((_req, res) => res.writeHead(500).end('{"error":"database down"}'))
    const result = await sender().send({ url: target.url, body })
    assertResult(result, { statusCode: 500, errorKind: 'http', verdict: 'retryable' })
    assert.equal(result.errorText, 'HTTP 500 Internal Server Error')
    assert.equal(result.responseExcerpt, '{"error":"database down"}')
  })

  test('503 with Retry-After (seconds): retryable, retryAfterMs reported', async () => {
    const target = await receiver((_req, res) => res.writeHead(503, { 'retry-after': '120' }).end())
    const result = await sender().send({ url: target.url, body })
    assertResult(result, { statusCode: 503, errorKind: 'http', verdict: 'retryable' })
    assert.equal(result.retryAfterMs, 120_000)
  })

  test('429 with Retry-After (HTTP date): retryable, retryAfterMs from the date', async () => {
    const at = new Date(Date.now() + 60_000).toUTCString()
    const target = await receiver((_req, res) => res.writeHead(429, { 'retry-after': at }).end('slow down'))
    const result = await sender().send({ url: target.url, body })
    assertResult(result, { statusCode: 429, errorKind: 'http', verdict: 'retryable' })
    assert.ok(
      result.retryAfterMs !== undefined && result.retryAfterMs > 55_000 && result.retryAfterMs <= 60_000,
    )
    assert.equal(result.errorText, 'HTTP 429 Too Many Requests')
  })

  test('408: retryable', async () => {
    const target = await receiver((_req, res) => res.writeHead(408).end())
    assertResult(await sender().send({ url: target.url, body }), { statusCode: 408, verdict: 'retryable' })
  })

  test('404: final, not retried', async () => {
    const target = await receiver((_req, res) => res.writeHead(404).end('no such hook'))
    const result = await sender().send({ url: target.url, body })
    assertResult(result, { statusCode: 404, errorKind: 'http', verdict: 'final' })
    assert.equal(result.retryAfterMs, undefined)
    assert.equal(result.responseExcerpt, 'no such hook')
  })

  test('301: not followed, final, the redirect target is never hit', async () => {
    const elsewhere = await receiver()
    const target = await receiver((_req, res) =>
      res.writeHead(301, { location: `${elsewhere.url}/moved` }).end(),
    )
    const result = await sender().send({ url: target.url, body })
    assertResult(result, { statusCode: 301, errorKind: 'redirect', verdict: 'final' })
    assert.match(
      result.errorText ?? '',
      new RegExp(`^HTTP 301 Moved Permanently to ${elsewhere.url}/moved: Sluice never follows redirects`),
    )
    assert.equal(target.requests.length, 1)
    assert.equal(elsewhere.requests.length, 0)
    assert.equal(elsewhere.connections, 0)
  })

  test('307 and 308 are not followed either', async () => {
    for (const status of [302, 307, 308]) {
      const target = await receiver((_req, res) => res.writeHead(status, { location: '/again' }).end())
      const result = await sender().send({ url: target.url, body })
      assertResult(result, { statusCode: status, errorKind: 'redirect', verdict: 'final' })
      assert.equal(target.requests.length, 1)
    }
  })

  test('an endpoint that hangs past the timeout: timeout, retryable, its socket released', async () => {
    const target = await receiver(() => {}) // never answers
    const started = Date.now()
    const result = await sender({ timeoutMs: 300 }).send({ url: target.url, body })
    const took = Date.now() - started
    assertResult(result, { errorKind: 'timeout', verdict: 'retryable' })
    assert.equal(result.statusCode, undefined)
    assert.equal(result.errorText, 'No response within 300 ms.')
    assert.ok(took >= 290 && took < 2500, `took ${took} ms`)
    assert.ok(result.latencyMs >= 290)
    assert.equal(target.requests.length, 1, 'the request was sent; the answer never came')
    assert.ok(await eventually(() => target.openSockets.size === 0), 'the aborted socket is closed')
  })

  test('the default timeout is 5 s', async () => {
    const target = await receiver(() => {})
    const client = sender({ timeoutMs: undefined })
    assert.equal(client.timeoutMs, 5000)
    const started = Date.now()
    const result = await client.send({ url: target.url, body })
    const took = Date.now() - started
    assertResult(result, { errorKind: 'timeout', verdict: 'retryable' })
    assert.ok(took >= 4990 && took < 6000, `took ${took} ms`)
  })

  test('connection reset mid-request: connect error, retryable', async () => {
    const target = await receiver((req) => req.socket.resetAndDestroy())
    const result = await sender().send({ url: target.url, body })
    assertResult(result, { errorKind: 'connect', verdict: 'retryable' })
    assert.match(
      result.errorText ?? '',
      /^Connection to 127\.0\.0\.1:\d+ failed: .*\((ECONNRESET|UND_ERR_SOCKET)\)\.$/,
    )
  })

  test('connection closed without an answer: connect error, retryable', async () => {
    const target = await receiver((req) => req.socket.destroy())
    const result = await sender().send({ url: target.url, body })
    assertResult(result, { errorKind: 'connect', verdict: 'retryable' })
  })

  test('connection refused: connect error, retryable, fails fast', async () => {
    const port = await unusedPort()
    const started = Date.now()
    const result = await sender().send({ url: `http://127.0.0.1:${port}/hook`, body })
    assertResult(result, { errorKind: 'connect', verdict: 'retryable' })
    assert.match(result.errorText ?? '', /ECONNREFUSED/)
    assert.ok(Date.now() - started < 2500, 'refused at once, not after the 5 s timeout')
  })

  test('garbage instead of HTTP: protocol error, retryable', async () => {
    const target = await receiver((req) => {
      req.socket.end('SMTP ready\r\n\r\n')
    })
    const result = await sender().send({ url: target.url, body })
    assertResult(result, { errorKind: 'protocol', verdict: 'retryable' })
    assert.match(result.errorText ?? '', /did not answer with valid HTTP\/1\.1/)
  })

  test('a huge response body: excerpt is 1 KB, the rest is not read, returns promptly', async () => {
    let written = 0
    let stoppedBecauseClosed = false
    const target = await receiver((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' })
      const chunk = Buffer.alloc(64 * 1024, 'x')
      const pump = () => {
        while (!res.destroyed && written < 500 * 1024 * 1024) {
          written += chunk.length
          if (!res.write(chunk)) return void res.once('drain', pump)
        }
        stoppedBecauseClosed = res.destroyed
      }
      res.on('close', () => {
        stoppedBecauseClosed = true
      })
      pump()
    })
    const started = Date.now()
    const result = await sender({ timeoutMs: 5000 }).send({ url: target.url, body })
    assert.ok(Date.now() - started < 4000, `took ${Date.now() - started} ms, not the 5 s timeout`)
    assertResult(result, { statusCode: 500, verdict: 'retryable' })
    assert.equal(Buffer.byteLength(result.responseExcerpt), 1024)
    assert.equal(result.responseExcerpt, 'x'.repeat(1024))
    assert.ok(await eventually(() => stoppedBecauseClosed), 'the connection was closed, not drained')
    assert.ok(written < 50 * 1024 * 1024, `only ${written} bytes were written before the close`)
  })

  test('a trickling response body: whatever arrived within the wait, returns promptly', async () => {
    const target = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.write('accepted;')
      const timer = setInterval(() => res.write('.'), 50)
      res.on('close', () => clearInterval(timer))
    })
    const started = Date.now()
    // The 10 s deadline is not what ends it: the 1 s excerpt wait is.
    const result = await sender({ excerptWaitMs: 1000, timeoutMs: 10_000 }).send({ url: target.url, body })
    const took = Date.now() - started
    assertResult(result, { statusCode: 200, verdict: 'success' })
    assert.match(result.responseExcerpt, /^accepted;\.*$/)
    assert.ok(took < 5000, `took ${took} ms`)
    assert.ok(result.latencyMs < 900, 'latency is measured to the response headers')
  })

  test('an excerpt cut inside a multi-byte character drops the partial character', async () => {
    const target = await receiver((_req, res) => res.writeHead(400).end(`${'a'.repeat(1023)}é and more`))
    const result = await sender().send({ url: target.url, body })
    assert.equal(result.responseExcerpt, 'a'.repeat(1023))
  })

  test('a body ending in half a character, or with invalid bytes: decoded as before, partial character dropped', async () => {
    const half = Buffer.concat([Buffer.from('ok '), Buffer.from('€').subarray(0, 2)])
    const target = await receiver((_req, res) => res.writeHead(500).end(half))
    assert.equal((await sender().send({ url: target.url, body })).responseExcerpt, 'ok ')
    const invalid = Buffer.from([0x61, 0xff, 0xe2, 0x82, 0x62])
    const other = await receiver((_req, res) => res.writeHead(500).end(invalid))
    assert.equal((await sender().send({ url: other.url, body })).responseExcerpt, 'a\ufffd\ufffdb')
  })

  test('an excerpt arriving in several chunks is joined', async () => {
    const target = await receiver((_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' })
      res.write('first,')
      setTimeout(() => res.end('second'), 20)
    })
    const result = await sender().send({ url: target.url, body })
    assertResult(result, { statusCode: 503, verdict: 'retryable' })
    assert.equal(result.responseExcerpt, 'first,second')
  })

  test('a request still waiting for a connection at its deadline: timeout then, and never sent', async () => {
    // The only connection stays busy far beyond the queued request's deadline: the first request gets
    // its headers at once (so its own request deadline is over) and then a body that never ends, which
    // holds the socket for the whole excerpt wait. Had the queued request's deadline been missed, it
    // would be sent on that socket, or on a new one, the moment the first request lets go.
    const busy = await receiver((_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' })
      res.write('still writing')
    })
    const client = sender({ timeoutMs: 300, excerptWaitMs: 2_000, connectionsPerOrigin: 1 })
    const first = client.send({ url: `${busy.url}/first`, body })
    const queued = await client.send({ url: `${busy.url}/queued`, body })
    assertResult(queued, { errorKind: 'timeout', verdict: 'retryable' })
    assert.equal(queued.errorText, 'No response within 300 ms.')
    const firstResult = await first
    assertResult(firstResult, { statusCode: 503, verdict: 'retryable' })
    assert.equal(firstResult.responseExcerpt, 'still writing')
    await sleep(100)
    assert.deepEqual(
      busy.requests.map((request) => request.url),
      ['/first'],
      'the queued request was not sent after its deadline',
    )
  })

  test('many concurrent attempts share the deadlines: each answered one settles, the hanging ones time out', async () => {
    let calls = 0
    const target = await receiver((_req, res) => {
      calls++
      if (calls % 3 !== 0) res.end('ok') // every third request hangs
    })
    const client = sender({ timeoutMs: 400, connectionsPerOrigin: 30 })
    const results = await Promise.all(
      Array.from({ length: 30 }, () => client.send({ url: target.url, body })),
    )
    const byKind = results.map((result) => result.errorKind ?? String(result.statusCode))
    assert.equal(byKind.filter((kind) => kind === '200').length, 20)
    assert.equal(byKind.filter((kind) => kind === 'timeout').length, 10)
    for (const result of results.filter((r) => r.errorKind === 'timeout')) {
      assert.ok(result.latencyMs >= 390 && result.latencyMs < 2500, `${result.latencyMs} ms`)
    }
  })

  test('invalid URLs are final without any network activity', async () => {
    const client = sender()
    for (const url of ['not a url', '/relative', 'ftp://example.com/x', 'file:///etc/passwd']) {
      const result = await client.send({ url, body })
      assertResult(result, { errorKind: 'invalid_url', verdict: 'final' })
      assert.equal(result.latencyMs, 0)
    }
  })

  test('an unresolvable host name: dns error, retryable', async () => {
    const resolve: Resolver = async () => []
    const result = await sender({ resolve }).send({ url: 'http://no-such-host.test/hook', body })
    assertResult(result, { errorKind: 'dns', verdict: 'retryable' })
    assert.equal(result.errorText, 'Could not resolve no-such-host.test (ENOTFOUND).')
  })
})

describe('isolation: a hanging endpoint does not hold back others', () => {
  after(closeAll)

  test('a healthy origin answers at once while another origin hangs with every pool socket busy', async () => {
    const hanging = await receiver(() => {})
    const healthy = await receiver()
    const client = sender({ timeoutMs: 5000, connectionsPerOrigin: 2 })

    const stuck = Array.from({ length: 6 }, () => client.send({ url: hanging.url, body }))
    await eventually(() => hanging.requests.length === 2)
    assert.equal(hanging.connections, 2, 'at most connectionsPerOrigin sockets to the hanging origin')

    const started = Date.now()
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => client.send({ url: `${healthy.url}/${i}`, body })),
    )
    const took = Date.now() - started
    assert.ok(results.every((result) => result.statusCode === 200))
    assert.ok(took < 3000, `healthy deliveries took ${took} ms, not waiting for the 5 s timeouts`)

    const stuckResults = await Promise.all(stuck)
    assert.ok(stuckResults.every((result) => result.errorKind === 'timeout'))
    assert.ok(await eventually(() => hanging.openSockets.size === 0), 'timed-out sockets are closed')
  })
})

describe('TLS', () => {
  let tls: { key: Buffer; cert: Buffer }
  before(async () => {
    tls = await selfSignedCertificate()
  })
  after(closeAll)

  test('a self-signed certificate: tls error, final, and no request reaches the handler', async () => {
    let handlerCalls = 0
    const target = await startHttpsReceiver(tls, (_req, res) => {
      handlerCalls++
      res.end('ok')
    })
    cleanup.push(target)
    const result = await sender().send({
      url: `https://localhost:${target.port}/hook`,
      body,
      signatureHeaders: ['x-signature', 'abc'],
    })
    assertResult(result, { errorKind: 'tls', verdict: 'final' })
    assert.equal(result.statusCode, undefined)
    assert.match(
      result.errorText ?? '',
      /^TLS handshake with localhost:\d+ failed: self-signed certificate \(DEPTH_ZERO_SELF_SIGNED_CERT\); Sluice refuses to send to HTTPS endpoints whose certificate does not verify, so no request was sent/,
    )
    assert.ok(target.connections >= 1, 'the TCP connection was made')
    assert.equal(handlerCalls, 0, 'the request handler was never called')
    assert.equal(target.requests.length, 0)
  })

  test('the same certificate, explicitly trusted: delivered over HTTPS with verification on', async () => {
    const target = await startHttpsReceiver(tls)
    cleanup.push(target)
    const client = sender({ trustedCa: tls.cert })
    const result = await client.send({ url: `https://localhost:${target.port}/hook`, body })
    assertResult(result, { statusCode: 200, verdict: 'success' })
    assert.deepEqual(target.requests[0]?.body, body)
  })

  test('a certificate for another name: tls error, final', async () => {
    const target = await startHttpsReceiver(tls)
    cleanup.push(target)
    const resolve: Resolver = async () => [{ address: '127.0.0.1', family: 4 }]
    const result = await sender({ trustedCa: tls.cert, resolve }).send({
      url: `https://other.test:${target.port}/`,
      body,
    })
    assertResult(result, { errorKind: 'tls', verdict: 'final' })
    assert.match(result.errorText ?? '', /ERR_TLS_CERT_ALTNAME_INVALID/)
    assert.equal(target.requests.length, 0)
  })

  test('https:// to a plain HTTP port: tls error, final', async () => {
    const target = await receiver()
    const result = await sender().send({ url: `https://127.0.0.1:${target.port}/`, body })
    assertResult(result, { errorKind: 'tls', verdict: 'final' })
    assert.equal(target.requests.length, 0)
  })
})

describe('SSRF guard in the sender (allowPrivate: false)', () => {
  let target: Receiver
  before(async () => {
    target = await startReceiver()
  })
  after(async () => {
    await target.close()
    await closeAll()
  })

  const urls = (port: number) => [
    `http://127.0.0.1:${port}/hook`,
    `http://localhost:${port}/hook`,
    `http://2130706433:${port}/hook`,
    `http://0x7f.1:${port}/hook`,
    `http://0177.0.0.1:${port}/hook`,
    `http://[::ffff:127.0.0.1]:${port}/hook`,
    `http://[::1]:${port}/hook`,
    `https://127.0.0.1:${port}/hook`,
  ]

  test('loopback in every spelling is refused and nothing reaches the server', async () => {
    const client = sender({ allowPrivate: false })
    for (const url of urls(target.port)) {
      const result = await client.send({ url, body })
      assertResult(result, { errorKind: 'ssrf', verdict: 'final' })
      assert.match(
        result.errorText ?? '',
        /^Refused to connect to .*loopback.*SLUICE_ALLOW_PRIVATE_DESTINATIONS=true/,
        url,
      )
    }
    assert.equal(target.connections, 0)
    assert.equal(target.requests.length, 0)
  })

  test('a host name resolving to 127.0.0.1 is refused; the same with allowPrivate dials the pinned address', async () => {
    const resolve: Resolver = async (hostname) =>
      hostname === 'hooks.customer.test' ? [{ address: '127.0.0.1', family: 4 }] : []
    const refused = await sender({ allowPrivate: false, resolve }).send({
      url: `http://hooks.customer.test:${target.port}/x`,
      body,
    })
    assertResult(refused, { errorKind: 'ssrf', verdict: 'final' })
    assert.match(
      refused.errorText ?? '',
      /^Refused to connect to hooks\.customer\.test \(127\.0\.0\.1\): loopback/,
    )
    assert.equal(target.connections, 0)

    // The name exists only in our resolver's table, so reaching the server proves the socket dialled
    // the address the guarded lookup returned.
    const allowed = await sender({ allowPrivate: true, resolve }).send({
      url: `http://hooks.customer.test:${target.port}/x`,
      body,
    })
    assert.equal(allowed.statusCode, 200)
    assert.equal(target.requests.at(-1)?.headers.host, `hooks.customer.test:${target.port}`)
  })

  test('metadata and private addresses are refused before any packet is sent', async () => {
    const client = sender({ allowPrivate: false, timeoutMs: 10_000 })
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://[fd00:ec2::254]/',
    ]) {
      const started = Date.now()
      const result = await client.send({ url, body })
      assertResult(result, { errorKind: 'ssrf', verdict: 'final' })
      assert.ok(Date.now() - started < 3000, 'refused at once, not after a 10 s connect attempt')
    }
  })

  test('allowPrivate: true delivers to loopback', async () => {
    const before = target.requests.length
    const result = await sender({ allowPrivate: true }).send({
      url: `http://127.0.0.1:${target.port}/ok`,
      body,
    })
    assert.equal(result.statusCode, 200)
    assert.equal(target.requests.length, before + 1)
  })
})

/** Checks what the sender reported, and the retry policy's verdict on it. */
function assertResult(
  result: AttemptResult,
  expected: Partial<Pick<AttemptResult, 'statusCode' | 'errorKind'> & { verdict: AttemptVerdict }>,
): void {
  const verdict = classifyAttempt(result)
  const actual = { statusCode: result.statusCode, errorKind: result.errorKind, verdict }
  for (const key of Object.keys(expected) as Array<keyof typeof expected>) {
    assert.equal(actual[key], expected[key], `${key} (errorText: ${result.errorText})`)
  }
  if (verdict !== 'success') assert.ok(result.errorText, 'a failure explains itself')
}
