import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { gzipSync } from 'node:zlib'
import type { Source } from '../../src/domain/sources.ts'
import { MAX_BATCH_ITEMS, MAX_MESSAGE_BYTES, MAX_REQUEST_BYTES } from '../../src/ingest/limits.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send, trackCall } from '../helpers/tracking.ts'

let sluice: TestSluice
let source: Source

before(async () => {
  sluice = await startTestSluice()
  source = await sluice.createSource('Limits tests')
})
after(() => sluice.destroy())

/** A track call whose JSON is exactly `bytes` long (padding in properties.pad). */
function messageOfSize(bytes: number, messageId: string): Record<string, unknown> {
  const message = trackCall({ messageId, properties: { pad: '' } })
  const base = Buffer.byteLength(JSON.stringify(message))
  ;(message.properties as Record<string, string>).pad = 'x'.repeat(bytes - base)
  assert.equal(Buffer.byteLength(JSON.stringify(message)), bytes)
  return message
}

/** A `/v1/batch` body whose JSON is exactly `bytes` long, padded in the batch context. */
function batchBodyOfSize(bytes: number): string {
  const body = { batch: [trackCall({ messageId: `body-${bytes}` })], context: { pad: '' } }
  const base = Buffer.byteLength(JSON.stringify(body))
  body.context.pad = 'y'.repeat(bytes - base)
  const text = JSON.stringify(body)
  assert.equal(Buffer.byteLength(text), bytes)
  return text
}

describe('request size (500 KB after decompression)', () => {
  test('a body of exactly 500 KB is accepted', async () => {
    const response = await send(sluice.url, '/v1/batch', undefined, {
      writeKey: source.writeKey,
      raw: batchBodyOfSize(MAX_REQUEST_BYTES),
    })
    assert.equal(response.status, 200, response.text)
  })

  test('one byte over is a 413 that says the limit and what to do', async () => {
    const response = await send(sluice.url, '/v1/batch', undefined, {
      writeKey: source.writeKey,
      raw: batchBodyOfSize(MAX_REQUEST_BYTES + 1),
    })
    assert.equal(response.status, 413)
    assert.equal(response.body.error.code, 'body_too_large')
    assert.match(response.body.error.message, /512000 bytes \(500 KB\).*split it into smaller batches/)
  })

  test('a large body far over the limit is refused before it is read whole', async () => {
    const response = await send(sluice.url, '/v1/batch', undefined, {
      writeKey: source.writeKey,
      raw: batchBodyOfSize(3 * MAX_REQUEST_BYTES),
    })
    assert.equal(response.status, 413)
    assert.equal(response.body.error.code, 'body_too_large')
  })

  test('gzip bodies are accepted', async () => {
    const response = await send(
      sluice.url,
      '/v1/batch',
      { batch: [trackCall({ messageId: 'gz' })] },
      {
        writeKey: source.writeKey,
        gzip: true,
      },
    )
    assert.equal(response.status, 200)
    assert.ok(await sluice.store.getMessage(source.id, 'gz'))
  })

  test('gzip at exactly 500 KB inflated is accepted; one byte over is 413 (a small wire size does not matter)', async () => {
    const atLimit = await send(sluice.url, '/v1/batch', undefined, {
      writeKey: source.writeKey,
      raw: batchBodyOfSize(MAX_REQUEST_BYTES),
      gzip: true,
    })
    assert.equal(atLimit.status, 200)
    const over = await send(sluice.url, '/v1/batch', undefined, {
      writeKey: source.writeKey,
      raw: batchBodyOfSize(MAX_REQUEST_BYTES + 1),
      gzip: true,
    })
    assert.equal(over.status, 413)
    assert.match(over.body.error.message, /after decompression/)
  })

  test('a gzip bomb is refused without inflating it all', async () => {
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x20))
    assert.ok(bomb.length < 100 * 1024)
    const response = await send(sluice.url, '/v1/batch', undefined, {
      writeKey: source.writeKey,
      raw: bomb,
      headers: { 'content-encoding': 'gzip' },
    })
    assert.equal(response.status, 413)
  })

  test('a body that claims gzip but is not: 400', async () => {
    const response = await send(sluice.url, '/v1/batch', undefined, {
      writeKey: source.writeKey,
      raw: '{"batch":[]}',
      headers: { 'content-encoding': 'gzip' },
    })
    assert.equal(response.status, 400)
    assert.equal(response.body.error.code, 'invalid_encoding')
  })

  test('an unsupported Content-Encoding: 415', async () => {
    const response = await send(sluice.url, '/v1/batch', undefined, {
      writeKey: source.writeKey,
      raw: '{"batch":[]}',
      headers: { 'content-encoding': 'br' },
    })
    assert.equal(response.status, 415)
    assert.match(response.body.error.message, /gzip/)
  })
})

describe('JSON', () => {
  test('invalid JSON: 400 with the parser message', async () => {
    const response = await send(sluice.url, '/v1/batch', undefined, {
      writeKey: source.writeKey,
      raw: '{"batch": [',
    })
    assert.equal(response.status, 400)
    assert.equal(response.body.error.code, 'invalid_json')
    assert.match(response.body.error.message, /not valid JSON/)
  })

  test('an empty body: 400', async () => {
    const response = await send(sluice.url, '/v1/track', undefined, { writeKey: source.writeKey, raw: '' })
    assert.equal(response.status, 400)
    assert.match(response.body.error.message, /empty/)
  })

  test('a JSON array instead of an object: 400', async () => {
    const response = await send(sluice.url, '/v1/track', [trackCall()], { writeKey: source.writeKey })
    assert.equal(response.status, 400)
    assert.match(response.body.error.message, /JSON object/)
  })
})

describe('message size (32 KB) and batch length (2,500)', () => {
  test('a message of exactly 32 KB is accepted; one byte more is rejected alone', async () => {
    const batch = [
      messageOfSize(MAX_MESSAGE_BYTES, 'at-32k'),
      messageOfSize(MAX_MESSAGE_BYTES + 1, 'over-32k'),
    ]
    const response = await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })
    assert.equal(response.status, 200)
    assert.equal(response.body.accepted, 1)
    assert.equal(response.body.rejected[0].index, 1)
    assert.match(response.body.rejected[0].error, /32769 bytes; the limit is 32768 bytes/)
    assert.ok(await sluice.store.getMessage(source.id, 'at-32k'))
    assert.equal(await sluice.store.getMessage(source.id, 'over-32k'), null)
  })

  test(`${MAX_BATCH_ITEMS} items are accepted; one more is a 400 and nothing is stored`, async () => {
    const items = (n: number, prefix: string) =>
      Array.from({ length: n }, (_, i) => ({ type: 'identify', userId: 'u', messageId: `${prefix}-${i}` }))
    const ok = await send(
      sluice.url,
      '/v1/batch',
      { batch: items(MAX_BATCH_ITEMS, 'max') },
      { writeKey: source.writeKey },
    )
    assert.equal(ok.status, 200)
    assert.ok(await sluice.store.getMessage(source.id, `max-${MAX_BATCH_ITEMS - 1}`))
    const over = await send(
      sluice.url,
      '/v1/batch',
      { batch: items(MAX_BATCH_ITEMS + 1, 'over') },
      {
        writeKey: source.writeKey,
      },
    )
    assert.equal(over.status, 400)
    assert.equal(over.body.error.code, 'batch_too_large')
    assert.match(over.body.error.message, /2501 messages; the limit is 2500/)
    assert.equal(await sluice.store.getMessage(source.id, 'over-0'), null)
  })
})

/**
 * Sends a request whose declared body is `bodyBytes` long over a raw socket: the head and the first
 * 64 KB, then (once the answer has arrived) the rest in 64 KB writes. Resolves with the answer's text,
 * whether every byte could be written, and how the connection ended.
 */
function sendRefusedBody(
  url: string,
  head: string,
  bodyBytes: number,
): Promise<{ answer: string; written: number; ended: 'open' | 'closed' | 'reset' }> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname)
    const chunk = Buffer.alloc(64 * 1024, 0x20)
    let answer = ''
    let written = 0
    let ended: 'open' | 'closed' | 'reset' = 'open'
    let sendingRest = false
    const finish = () => {
      clearTimeout(settle)
      socket.destroy()
      resolve({ answer, written, ended })
    }
    // The verdict is in once the rest is written and the server has had a moment to act on it.
    let settle = setTimeout(finish, 20_000)
    const writeRest = () => {
      while (written < bodyBytes && ended === 'open') {
        const ok = socket.write(chunk.subarray(0, Math.min(chunk.length, bodyBytes - written)))
        written += Math.min(chunk.length, bodyBytes - written)
        if (!ok) return void socket.once('drain', writeRest)
      }
      clearTimeout(settle)
      settle = setTimeout(finish, 500)
    }
    socket.on('data', (data) => {
      answer += data.toString('latin1')
      if (!sendingRest && answer.includes('\r\n\r\n')) {
        sendingRest = true
        // Let the server act on its answer (it closed at once, before) before sending the rest.
        setTimeout(writeRest, 100)
      }
    })
    socket.on('end', () => {
      if (ended === 'open') ended = 'closed'
    })
    socket.on('error', () => {
      ended = 'reset'
      finish()
    })
    socket.write(`${head}content-length: ${bodyBytes}\r\n\r\n`)
    socket.write(chunk)
    written = chunk.length
  })
}

describe('a body refused for its size', () => {
  const head = (path: string, authorization: string) =>
    `POST ${path} HTTP/1.1\r\nhost: sluice\r\ncontent-type: application/json\r\nauthorization: ${authorization}\r\n`

  test('the client can send it to its end and read the 413; the connection is not reset', async () => {
    const basic = `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`
    for (const [path, authorization] of [
      ['/v1/batch', basic],
      ['/api/v1/sources', `Bearer ${sluice.adminToken}`],
    ] as const) {
      const result = await sendRefusedBody(sluice.url, head(path, authorization), 3 * 1024 * 1024)
      assert.match(result.answer, /^HTTP\/1\.1 413 /, path)
      assert.match(result.answer, /"code":"body_too_large"/, path)
      assert.notEqual(result.ended, 'reset', `${path}: the connection was reset while the body was sent`)
      assert.equal(result.written, 3 * 1024 * 1024, path)
    }
  })

  test('a refused body far larger than any limit is not read for ever: the connection closes', async () => {
    const basic = `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`
    const result = await sendRefusedBody(sluice.url, head('/v1/batch', basic), 1024 * 1024 * 1024)
    assert.match(result.answer, /^HTTP\/1\.1 413 /)
    assert.notEqual(result.ended, 'open', 'the server still reads a 1 GB body it refused')
    assert.ok(result.written < 1024 * 1024 * 1024)
  })
})
