import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import fc from 'fast-check'
import { Batch, ENVELOPE_BYTES, readMessageId } from '../src/lib/batch.ts'
import { isoNow } from '../src/lib/clock.ts'
import { Emitter } from '../src/lib/emitter.ts'
import { quote } from '../src/lib/json.ts'
import {
  aliasMessage,
  groupMessage,
  identifyMessage,
  pageMessage,
  type Serialized,
  screenMessage,
  trackMessage,
} from '../src/lib/messages.ts'
import { BatchQueue, DROPPED, SEALED, SEALED_BYTES, SEALED_FULL, STARTED } from '../src/lib/queue.ts'
import { backoff, isRetryableStatus, parseRetryAfter } from '../src/lib/retry.ts'
import { utf8Length, utf8LengthPortable } from '../src/lib/utf8.ts'
import { uuid } from '../src/lib/uuid.ts'
import { LIBRARY } from '../src/version.ts'
import { startServer } from './helpers/server.ts'

describe('small modules', () => {
  test('LIBRARY.version is the package.json version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
    assert.deepEqual(LIBRARY, { name: pkg.name, version: pkg.version })
  })

  test('utf8Length (native and portable) equals the encoded length for any string, lone surrogates included', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'grapheme' }),
          fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
        ),
        (text) => {
          const expected = new TextEncoder().encode(text).length
          assert.equal(utf8LengthPortable(text), expected)
          assert.equal(utf8Length(text), expected)
        },
      ),
      { numRuns: 2000 },
    )
  })

  test('backoff doubles from the base, stays within [ceiling/2, ceiling] and never passes the max', () => {
    assert.equal(
      backoff(1, 200, 30_000, () => 1),
      200,
    )
    assert.equal(
      backoff(1, 200, 30_000, () => 0),
      100,
    )
    assert.equal(
      backoff(4, 200, 30_000, () => 1),
      1600,
    )
    assert.equal(
      backoff(20, 200, 30_000, () => 1),
      30_000,
    )
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 120_000 }),
        (attempt, base, max) => {
          const ceiling = Math.min(max, base * 2 ** (attempt - 1))
          const delay = backoff(attempt, base, max)
          assert.ok(
            delay >= Math.floor(ceiling / 2) && delay <= Math.ceil(ceiling),
            `${delay} for ${ceiling}`,
          )
        },
      ),
    )
  })

  test('Retry-After: seconds or an HTTP date; garbage is ignored', () => {
    const now = Date.parse('2026-01-31T12:00:00Z')
    assert.equal(parseRetryAfter('7', now), 7000)
    assert.equal(parseRetryAfter(' 0 ', now), 0)
    assert.equal(parseRetryAfter('Sat, 31 Jan 2026 12:00:30 GMT', now), 30_000)
    assert.equal(parseRetryAfter('Sat, 31 Jan 2026 11:00:00 GMT', now), 0)
    assert.equal(parseRetryAfter('soon', now), undefined)
    assert.equal(parseRetryAfter('-3', now), undefined)
    assert.equal(parseRetryAfter(null, now), undefined)
  })

  test('retryable statuses: 5xx, 408, 429 only', () => {
    for (const status of [500, 502, 503, 504, 408, 429])
      assert.equal(isRetryableStatus(status), true, String(status))
    for (const status of [400, 401, 403, 404, 409, 413, 422])
      assert.equal(isRetryableStatus(status), false, String(status))
  })

  test('uuid is a v4 UUID; isoNow is the current ISO time', () => {
    assert.match(uuid(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    assert.ok(Math.abs(Date.parse(isoNow()) - Date.now()) < 1000)
  })

  test('uuid: every id a distinct v4 UUID across many entropy refills, every random digit used', () => {
    const ids = new Set<string>()
    // Which hex digits each of the 32 positions took: all 16 where the digit is random.
    const digits = Array.from({ length: 32 }, () => new Set<string>())
    for (let i = 0; i < 20_000; i++) {
      const id = uuid()
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      ids.add(id)
      const hex = id.replaceAll('-', '')
      for (let position = 0; position < 32; position++) digits[position]!.add(hex[position]!)
    }
    assert.equal(ids.size, 20_000)
    const counts = digits.map((seen) => seen.size)
    // Position 12 is the version (4), position 16 the variant (8, 9, a or b).
    assert.deepEqual(
      counts,
      counts.map((_, position) => (position === 12 ? 1 : position === 16 ? 4 : 16)),
    )
  })

  test('BatchQueue: batches keep order, respect flushAt and maxBatchBytes exactly, and the counts balance', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 200, max: 5000 }),
        fc.array(fc.integer({ min: 1, max: 150 }), { maxLength: 300 }),
        (flushAt, maxBatchBytes, sizes) => {
          const queue = new BatchQueue({ flushAt, maxBatchBytes, maxQueueSize: 1e9, maxQueueBytes: 1e12 })
          let bytesAdded = 0
          sizes.forEach((size, i) => {
            const json = JSON.stringify({ type: 'track', messageId: `id${i}`, filler: 'x'.repeat(size) })
            bytesAdded += json.length
            const flags = queue.add(json, json.length)
            assert.notEqual(flags, DROPPED)
            if (flags & STARTED) assert.equal(queue.openBatch?.size, 1)
          })
          queue.seal()
          const seen: string[] = []
          let bytesSeen = 0
          for (let batch = queue.take(); batch; batch = queue.take()) {
            assert.ok(batch.size >= 1 && batch.size <= flushAt)
            assert.equal(batch.bytes, batch.body('2026-01-31T12:00:00.000Z').length)
            assert.ok(batch.bytes <= maxBatchBytes || batch.size === 1)
            seen.push(...batch.messageIds())
            bytesSeen += batch.messageBytes
            queue.release(batch)
          }
          assert.deepEqual(
            seen,
            sizes.map((_, i) => `id${i}`),
          )
          assert.equal(bytesSeen, bytesAdded)
          assert.equal(queue.held, 0)
          assert.equal(queue.heldBytes, 0)
        },
      ),
    )
  })

  test('quote writes any string exactly as JSON.stringify does', () => {
    const anyUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code))
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: anyUnit })),
        (text) => {
          assert.equal(quote(text), JSON.stringify(text))
        },
      ),
      { numRuns: 3000 },
    )
  })

  test('each builder writes the message JSON.stringify would write for the same call', () => {
    const text = fc.string({
      unit: fc.oneof(
        fc.constantFrom('"', '\\', '\n', '\u2028', '\ud800', 'é', '🎉'),
        fc.string({ minLength: 1, maxLength: 1 }),
      ),
    })
    const id = fc.option(
      text.filter((s) => s !== ''),
      { nil: undefined },
    )
    const object = fc.option(fc.dictionary(fc.string(), fc.jsonValue()), { nil: undefined })
    fc.assert(
      fc.property(
        fc.record({
          userId: text.filter((s) => s !== ''),
          anonymousId: id,
          messageId: id,
          name: id,
          event: text.filter((s) => s.trim() !== ''),
        }),
        fc.record({
          properties: object,
          traits: object,
          integrations: fc.option(fc.dictionary(fc.string(), fc.boolean()), { nil: undefined }),
          context: object,
          url: id,
        }),
        (strings, objects) => {
          const common = {
            userId: strings.userId,
            anonymousId: strings.anonymousId,
            messageId: strings.messageId,
          }
          const timestamp = '2026-01-31T12:00:00.000Z'
          const calls: [Serialized, Record<string, unknown>][] = [
            [
              trackMessage({
                ...common,
                timestamp,
                event: strings.event,
                properties: objects.properties,
                integrations: objects.integrations,
                context: objects.context,
              }),
              { type: 'track', event: strings.event, properties: objects.properties },
            ],
            [
              identifyMessage({
                ...common,
                timestamp,
                traits: objects.traits,
                integrations: objects.integrations,
                context: objects.context,
              }),
              { type: 'identify', traits: objects.traits },
            ],
            [
              pageMessage({
                ...common,
                timestamp,
                name: strings.name,
                properties: objects.properties,
                url: objects.url,
                integrations: objects.integrations,
                context: objects.context,
              }),
              {
                type: 'page',
                name: strings.name,
                properties:
                  objects.url === undefined
                    ? objects.properties
                    : { ...objects.properties, url: objects.url },
              },
            ],
            [
              screenMessage({
                ...common,
                timestamp,
                name: strings.name,
                integrations: objects.integrations,
                context: objects.context,
              }),
              { type: 'screen', name: strings.name },
            ],
            [
              groupMessage({
                ...common,
                timestamp,
                groupId: strings.event,
                traits: objects.traits,
                integrations: objects.integrations,
                context: objects.context,
              }),
              { type: 'group', groupId: strings.event, traits: objects.traits },
            ],
            [
              aliasMessage({
                ...common,
                timestamp,
                previousId: strings.event,
                integrations: objects.integrations,
                context: objects.context,
              }),
              { type: 'alias', previousId: strings.event },
            ],
          ]
          for (const [serialized, specific] of calls) {
            const reference = {
              ...specific,
              messageId: serialized.messageId,
              timestamp,
              userId: strings.userId,
              anonymousId: strings.anonymousId,
              integrations: objects.integrations,
              context:
                objects.context?.library === undefined
                  ? { ...objects.context, library: LIBRARY }
                  : objects.context,
            }
            assert.deepEqual(JSON.parse(serialized.json), JSON.parse(JSON.stringify(reference)))
            // The size counted while writing is the exact UTF-8 size (lone surrogates as U+FFFD, 3 bytes).
            assert.equal(serialized.bytes, new TextEncoder().encode(serialized.json).length)
            assert.equal(serialized.messageId, strings.messageId ?? serialized.messageId)
            assert.equal(readMessageId(serialized.json), serialized.messageId)
            assert.ok(serialized.json.startsWith(`{"type":"${serialized.type}","messageId":`))
          }
        },
      ),
      { numRuns: 500 },
    )
  })

  test('Batch: messages, messageIds and body are the same before and after seal', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 25 }),
        fc.boolean(),
        (ids, seal) => {
          const batch = new Batch(1)
          const jsons = ids.map((id, i) => JSON.stringify({ type: 'track', messageId: id, event: `e${i}é` }))
          for (const json of jsons) batch.add(json, utf8Length(json))
          if (seal) batch.seal()
          assert.equal(batch.size, jsons.length)
          assert.deepEqual(
            jsons.map((_, index) => batch.message(index)),
            jsons,
          )
          assert.equal(batch.message(-1), undefined)
          assert.equal(batch.message(jsons.length), undefined)
          assert.deepEqual(batch.messageIds(), ids)
          const bytes = batch.body('2026-01-31T12:00:00.000Z')
          assert.equal(bytes.length, batch.bytes)
          const body = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
          assert.deepEqual(
            JSON.parse(body).batch,
            jsons.map((json) => JSON.parse(json)),
          )
          assert.equal(utf8Length(body), batch.bytes)
        },
      ),
      { numRuns: 500 },
    )
  })

  test('readMessageId reads back any messageId from a serialized message', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', minLength: 1 }),
        fc.constantFrom('identify', 'track', 'alias'),
        (id, type) => {
          const json = JSON.stringify({
            type,
            messageId: id,
            properties: { messageId: 'decoy' },
            context: {},
          })
          assert.equal(readMessageId(json), id)
        },
      ),
      { numRuns: 2000 },
    )
    assert.equal(readMessageId('{"type":"track","messageId":"a\\"b\\\\","event":"E"}'), 'a"b\\')
  })

  test('BatchQueue flags: STARTED, SEALED_FULL, SEALED_BYTES, DROPPED', () => {
    const queue = new BatchQueue({
      flushAt: 2,
      maxBatchBytes: ENVELOPE_BYTES + 10,
      maxQueueSize: 4,
      maxQueueBytes: 1000,
    })
    assert.equal(queue.add('aaaa', 4), STARTED)
    assert.equal(queue.add('bbbb', 4), SEALED_FULL)
    assert.equal(queue.add('cccccc', 6), STARTED)
    // 6 + 1 + 6 > 10: sealed for size before, then the new one starts a batch.
    assert.equal(queue.add('dddddd', 6), SEALED_BYTES | STARTED)
    assert.equal(queue.add('e', 1), DROPPED)
    assert.equal(queue.readyCount, 2)
    assert.ok(SEALED & SEALED_FULL && SEALED & SEALED_BYTES)
  })

  test('Emitter: on, once, off', () => {
    class Probe extends Emitter<{ ping: number }> {
      fire(value: number) {
        this.emit('ping', value)
      }
    }
    const probe = new Probe()
    const seen: string[] = []
    const always = (n: number) => seen.push(`always ${n}`)
    probe.on('ping', always).once('ping', (n) => seen.push(`once ${n}`))
    probe.fire(1)
    probe.fire(2)
    probe.off('ping', always)
    probe.fire(3)
    assert.deepEqual(seen, ['always 1', 'once 1', 'always 2'])
  })

  test('a throwing listener surfaces as an uncaught exception but does not disturb delivery', async () => {
    const server = await startServer()
    const script = `
      import { Analytics } from ${JSON.stringify(fileURLToPath(new URL('../src/index.ts', import.meta.url)))}
      const errors = []
      process.on('uncaughtException', (error) => errors.push(error.message))
      const analytics = new Analytics({ writeKey: 'wk', endpoint: ${JSON.stringify(server.url)} })
      analytics.on('delivered', () => { throw new Error('listener bug') })
      analytics.on('delivered', (event) => errors.push('second listener ran: ' + event.messageIds.length))
      analytics.track({ userId: 'u1', event: 'E' })
      analytics.track({ userId: 'u1', event: 'E' })
      await analytics.close()
      await new Promise((resolve) => setImmediate(resolve))
      console.log(JSON.stringify({ errors, stats: analytics.stats }))
    `
    // Asynchronously: the test server runs in this process and must keep answering.
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script])
    await server.close()
    assert.deepEqual(JSON.parse(stdout), {
      errors: ['second listener ran: 2', 'listener bug'],
      stats: { pending: 0, delivered: 2, failed: 0, dropped: 0 },
    })
  })
})
