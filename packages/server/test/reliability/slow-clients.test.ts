/**
 * Slow clients: a request whose headers or body never finish arriving is answered 408 and its
 * connection closed once the client timeouts pass (SLUICE_CLIENT_HEADERS_TIMEOUT_MS,
 * SLUICE_CLIENT_REQUEST_TIMEOUT_MS; set to half a second and a second here so the test runs in
 * seconds), also when hundreds do it at once; a request that arrives in time is served, and a response
 * that lasts (the live debugger's stream) is not cut off by them.
 */
import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { clientTimeoutOptions } from '../../src/app/client-timeouts.ts'
import { loadConfig } from '../../src/config.ts'
import { sleep } from '../deliver/receivers.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'

const HEADERS_TIMEOUT_MS = 500
const REQUEST_TIMEOUT_MS = 1_000
/** How long past its timeout a connection may stay open: generous, for a loaded machine. */
const SLACK_MS = 5_000

interface RawConnection {
  socket: Socket
  /** Everything the server sent. */
  received(): string
  /** Resolves with the milliseconds from `openedAt` when the server closed the connection. */
  closed: Promise<number>
  openedAt: number
}

function open(baseUrl: string): Promise<RawConnection> {
  const { hostname, port } = new URL(baseUrl)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    let text = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      text += chunk
    })
    socket.once('error', reject)
    socket.once('connect', () => {
      const openedAt = performance.now()
      const closed = new Promise<number>((done) => {
        socket.once('close', () => done(performance.now() - openedAt))
      })
      resolve({ socket, received: () => text, closed, openedAt })
    })
  })
}

/** Waits for the server to close the connection, failing past `limitMs`. */
async function closedWithin(connection: RawConnection, limitMs: number, label: string): Promise<number> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`${label}: still open after ${limitMs} ms`)), limitMs)
  })
  try {
    return await Promise.race([connection.closed, late])
  } finally {
    clearTimeout(timer)
    connection.socket.destroy()
  }
}

describe('slow clients', () => {
  let sluice: TestSluice
  let writeKey: string

  before(async () => {
    sluice = await startTestSluice({
      clientHeadersTimeoutMs: HEADERS_TIMEOUT_MS,
      clientRequestTimeoutMs: REQUEST_TIMEOUT_MS,
    })
    writeKey = (await sluice.createSource('Slow')).writeKey
  })
  after(() => sluice.destroy())

  const head = (length: number) =>
    `POST /v1/track HTTP/1.1\r\nHost: sluice\r\nContent-Type: application/json\r\n` +
    `Authorization: Basic ${btoa(`${writeKey}:`)}\r\nContent-Length: ${length}\r\n\r\n`

  test('a body that stops arriving: 408 and closed after the request timeout', async () => {
    const connection = await open(sluice.url)
    connection.socket.write(`${head(1000)}{"userId":"slow",`)
    const elapsed = await closedWithin(connection, REQUEST_TIMEOUT_MS + SLACK_MS, 'partial body')
    assert.ok(elapsed >= REQUEST_TIMEOUT_MS - 50, `closed after ${elapsed} ms, before the timeout`)
    assert.match(connection.received(), /^HTTP\/1\.1 408 Request Timeout\r\n/)
    assert.match(connection.received(), /"code":"request_timeout"/)
    assert.match(connection.received(), /waits 500 ms for a request's headers and 1 s for all of it/)
  })

  test('answered before its body was read (401, 413): closed after the timeout, with no second answer', async () => {
    for (const [path, length] of [
      ['/api/v1/sources', 100],
      ['/v1/track', 10_000_000],
    ] as const) {
      const connection = await open(sluice.url)
      connection.socket.write(
        `POST ${path} HTTP/1.1\r\nHost: sluice\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n{"a":`,
      )
      await closedWithin(connection, REQUEST_TIMEOUT_MS + SLACK_MS, path)
      assert.match(connection.received(), /^HTTP\/1\.1 (401|413) /, path)
      assert.equal(connection.received().match(/HTTP\/1\.1/g)?.length, 1, connection.received())
    }
  })

  test('headers sent a byte at a time: 408 and closed after the headers timeout', async () => {
    const connection = await open(sluice.url)
    const text = head(20)
    let sent = 0
    const drip = setInterval(() => {
      if (connection.socket.writable && sent < text.length) connection.socket.write(text[sent++]!)
    }, 50)
    try {
      const elapsed = await closedWithin(connection, HEADERS_TIMEOUT_MS + SLACK_MS, 'dripped headers')
      assert.ok(elapsed >= HEADERS_TIMEOUT_MS - 50, `closed after ${elapsed} ms`)
      assert.ok(sent < text.length, 'the headers were never complete')
      assert.match(connection.received(), /^HTTP\/1\.1 408 /)
    } finally {
      clearInterval(drip)
    }
  })

  test('300 connections holding partial bodies are all closed; the server keeps serving', async () => {
    const connections = await Promise.all(Array.from({ length: 300 }, () => open(sluice.url)))
    for (const connection of connections) connection.socket.write(`${head(5000)}{"userId":"slow",`)
    await Promise.all(
      connections.map((connection, index) =>
        closedWithin(connection, REQUEST_TIMEOUT_MS + SLACK_MS, `connection ${index}`),
      ),
    )
    const health = await fetch(`${sluice.url}/healthz`)
    assert.equal(health.status, 200)
  })

  test('a request sent in pieces within the timeout is served; so is the next on the connection', async () => {
    const connection = await open(sluice.url)
    const body = JSON.stringify({ userId: 'patient', event: 'Arrived' })
    connection.socket.write(head(Buffer.byteLength(body)))
    await sleep(200)
    connection.socket.write(body.slice(0, 10))
    await sleep(200)
    connection.socket.write(body.slice(10))
    const deadline = Date.now() + SLACK_MS
    while (!connection.received().includes('{"success":true}') && Date.now() < deadline) await sleep(20)
    assert.match(connection.received(), /^HTTP\/1\.1 200 /)
    // Idle on keep-alive past both timeouts: the connection stays usable.
    await sleep(REQUEST_TIMEOUT_MS + 300)
    connection.socket.write(`${head(Buffer.byteLength(body))}${body}`)
    while (
      (connection.received().match(/HTTP\/1\.1 200 /g) ?? []).length < 2 &&
      Date.now() < deadline + 2000
    ) {
      await sleep(20)
    }
    assert.equal((connection.received().match(/HTTP\/1\.1 200 /g) ?? []).length, 2, connection.received())
    connection.socket.destroy()
  })

  test("a long answer (the live debugger's stream) is not cut off by the request timeout", async () => {
    const source = await sluice.createSource('Watched')
    const stream = await fetch(`${sluice.url}/api/v1/sources/${source.id}/live`, {
      headers: { authorization: `Bearer ${sluice.adminToken}` },
    })
    assert.equal(stream.status, 200)
    const reader = stream.body!.getReader()
    await reader.read() // ": watching"
    await sleep(REQUEST_TIMEOUT_MS * 2)
    const sent = await fetch(`${sluice.url}/v1/track`, {
      method: 'POST',
      headers: { authorization: `Basic ${btoa(`${source.writeKey}:`)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 'watched', event: 'Seen' }),
    })
    assert.equal(sent.status, 200)
    const { value } = await reader.read()
    assert.match(new TextDecoder().decode(value), /event: calls/)
    await reader.cancel()
  })
})

test('defaults: 10 s for the headers, 30 s for the whole request, checked every second', () => {
  const config = loadConfig({})
  assert.equal(config.clientHeadersTimeoutMs, 10_000)
  assert.equal(config.clientRequestTimeoutMs, 30_000)
  assert.deepEqual(clientTimeoutOptions(config), {
    requestTimeout: 30_000,
    http: { headersTimeout: 10_000, connectionsCheckingInterval: 1_000 },
  })
  assert.throws(
    () =>
      loadConfig({ SLUICE_CLIENT_HEADERS_TIMEOUT_MS: '20000', SLUICE_CLIENT_REQUEST_TIMEOUT_MS: '10000' }),
    /SLUICE_CLIENT_REQUEST_TIMEOUT_MS: must be at least SLUICE_CLIENT_HEADERS_TIMEOUT_MS/,
  )
})
