/**
 * Faulty receivers: endpoints that answer 500/502/503, hang, reset the connection,
 * refuse it (down), trickle their body, send a huge body, or flap between up and down.
 *
 * - Recovery inside the retry window: every message arrives, each delivery shows the fault in its
 *   recorded attempts, and a healthy destination of the same source is not held up meanwhile.
 * - Past the (shrunk) window: every delivery is dead-lettered, visible through the management API,
 *   and `POST /api/v1/deliveries/:id/replay` delivers it once the endpoint is back.
 */
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, describe, test } from 'node:test'
import { type Receiver, startReceiver, unusedPort } from '../deliver/receivers.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { ReceiptLog, until } from './helpers.ts'

type Fault = '500' | '502' | '503' | 'hang' | 'reset' | 'down' | 'slow body' | 'huge body' | 'flapping'

/** What the attempts of a delivery to each fault record. */
const EXPECTED_ERROR: Record<Fault, { errorKind: string; statusCode: number | null }> = {
  '500': { errorKind: 'http', statusCode: 500 },
  '502': { errorKind: 'http', statusCode: 502 },
  '503': { errorKind: 'http', statusCode: 503 },
  hang: { errorKind: 'timeout', statusCode: null },
  reset: { errorKind: 'connect', statusCode: null },
  down: { errorKind: 'connect', statusCode: null },
  'slow body': { errorKind: 'http', statusCode: 503 },
  'huge body': { errorKind: 'http', statusCode: 500 },
  flapping: { errorKind: 'http', statusCode: 503 },
}

const HUGE_BODY_BYTES = 64 * 1024 * 1024
const REQUEST_TIMEOUT_MS = 1_000

/**
 * A receiver on a fixed 127.0.0.1 port that misbehaves in one way until `recover()`, then answers 200.
 * `accepted` logs the messages it answered 200 to; `down` starts listening only at recovery.
 */
interface FaultyReceiver {
  fault: Fault
  url: string
  accepted: ReceiptLog
  requests: number
  /** Most bytes of a huge body the receiver managed to write before Sluice hung up. */
  hugeBytesWritten: number
  recover(): Promise<void>
  close(): Promise<void>
}

async function faultyReceiver(fault: Fault): Promise<FaultyReceiver> {
  const state = { healthy: false }
  const accepted = new ReceiptLog()
  const faulty: Omit<FaultyReceiver, 'url' | 'recover' | 'close'> = {
    fault,
    accepted,
    requests: 0,
    hugeBytesWritten: 0,
  }
  // Flapping fails every odd-numbered request (the first included) and takes every even one, so
  // however fast or slow the machine, some deliveries meet the fault and some get through at once.
  const healthyNow = () => (fault === 'flapping' ? faulty.requests % 2 === 0 : state.healthy)
  const respond = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    faulty.requests++
    res.on('error', () => {}) // writes to a socket Sluice closed
    const ok = healthyNow()
    if (ok && fault !== 'slow body' && fault !== 'huge body') {
      accepted.record(body)
      res.writeHead(200).end('ok')
      return
    }
    switch (fault) {
      case 'hang':
        return // never answers; Sluice gives up after its request timeout
      case 'reset':
        req.socket.destroy()
        return
      case 'slow body': {
        // Headers at once, then one byte every 100 ms, forever: Sluice must not wait for the end.
        if (ok) accepted.record(body)
        res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' })
        const trickle = setInterval(() => res.write('.'), 100)
        res.on('close', () => clearInterval(trickle))
        return
      }
      case 'huge body': {
        // 64 MB announced and streamed as fast as the socket takes it: Sluice must read only 1 KB.
        if (ok) accepted.record(body)
        res.writeHead(ok ? 200 : 500, { 'content-length': String(HUGE_BODY_BYTES) })
        const chunk = Buffer.alloc(64 * 1024, 0x78)
        let written = 0
        const pump = () => {
          while (written < HUGE_BODY_BYTES && !res.destroyed) {
            written += chunk.length
            if (!res.write(chunk)) return void res.once('drain', pump)
          }
          res.end()
        }
        res.on('close', () => {
          faulty.hugeBytesWritten = Math.max(faulty.hugeBytesWritten, written)
        })
        pump()
        return
      }
      default:
        res.writeHead(Number(fault === 'flapping' ? 503 : fault)).end(`failing with ${fault}`)
    }
  }

  if (fault === 'down') {
    // Nothing listens until recovery: connections are refused.
    const port = await unusedPort()
    let server: Server | undefined
    const receiver = Object.assign(faulty, {
      url: `http://127.0.0.1:${port}`,
      async recover() {
        state.healthy = true
        server = createServer((req, res) => {
          const chunks: Buffer[] = []
          req.on('data', (chunk: Buffer) => chunks.push(chunk))
          req.on('end', () => respond(req, res, Buffer.concat(chunks)))
        })
        await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve))
        assert.equal((server.address() as AddressInfo).port, port)
      },
      async close() {
        if (!server) return
        server.closeAllConnections()
        await new Promise<void>((resolve) => server!.close(() => resolve()))
      },
    })
    return receiver
  }
  const receiver: Receiver = await startReceiver(respond)
  return Object.assign(faulty, {
    url: receiver.url,
    async recover() {
      state.healthy = true
    },
    close: () => receiver.close(),
  })
}

const cleanup: Array<() => Promise<void>> = []
after(async () => {
  for (const close of cleanup.reverse()) await close()
})

async function sluiceWith(windowMs: number): Promise<TestSluice> {
  const sluice = await startTestSluice({
    retry: { baseDelayMs: 50, maxDelayMs: 300, windowMs, requestTimeoutMs: REQUEST_TIMEOUT_MS },
  })
  cleanup.push(() => sluice.destroy())
  return sluice
}

/** One source; one destination per faulty receiver (plus `extra` URLs), through the management API. */
async function connect(
  sluice: TestSluice,
  receivers: Array<{ url: string; name: string }>,
): Promise<{ writeKey: string; destinationIds: string[] }> {
  const source = await sluice.createSource('Faults')
  const destinationIds: string[] = []
  for (const { url, name } of receivers) {
    const created = await sluice.api('POST', '/api/v1/destinations', {
      name,
      type: 'webhooks',
      sourceIds: [source.id],
      settings: { webhooks: [{ url: `${url}/hook` }] },
    })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    destinationIds.push(created.body.id)
  }
  return { writeKey: source.writeKey, destinationIds }
}

async function sendMessages(sluice: TestSluice, writeKey: string, prefix: string, count: number) {
  const batch = Array.from({ length: count }, (_, i) => ({
    type: 'track',
    userId: 'user-1',
    event: 'Faulty',
    messageId: `${prefix}-${i}`,
  }))
  const response = await send(sluice.url, '/v1/batch', { batch }, { writeKey })
  assert.equal(response.status, 200, response.text)
  return batch.map((message) => message.messageId)
}

async function deliveries(sluice: TestSluice, destinationId: string, status?: string): Promise<any[]> {
  const query = status === undefined ? '?limit=500' : `?status=${status}&limit=500`
  const response = await sluice.api('GET', `/api/v1/destinations/${destinationId}/deliveries${query}`)
  assert.equal(response.status, 200)
  return response.body.deliveries
}

const ALL_FAULTS: Fault[] = [
  '500',
  '502',
  '503',
  'hang',
  'reset',
  'down',
  'slow body',
  'huge body',
  'flapping',
]

describe('faulty receivers', () => {
  test('recovery inside the retry window: every message arrives, the faults are recorded, a healthy destination is not held up', async (t) => {
    const count = 20
    const sluice = await sluiceWith(20_000)
    const receivers = await Promise.all(ALL_FAULTS.map(faultyReceiver))
    for (const receiver of receivers) cleanup.push(() => receiver.close())
    const healthy = new ReceiptLog()
    const healthyReceiver = await startReceiver((_req, res, body) => {
      healthy.record(body)
      res.end('ok')
    })
    cleanup.push(() => healthyReceiver.close())
    const { writeKey, destinationIds } = await connect(sluice, [
      ...receivers.map((r) => ({ url: r.url, name: r.fault })),
      { url: healthyReceiver.url, name: 'healthy' },
    ])

    const sentAt = performance.now()
    const ids = await sendMessages(sluice, writeKey, 'recover', count)
    // The healthy destination gets everything at once, while nine others fail, hang or trickle.
    await until(
      'the healthy destination to get every message',
      () => ids.every((id) => healthy.has(id)),
      Boolean,
      3_000,
    )
    const healthyMs = performance.now() - sentAt

    // Faulty until every delivery has failed twice (50-300 ms backoff), then back.
    const stillFaulty = receivers.flatMap((r, index) => (r.fault === 'flapping' ? [] : [index]))
    await until(
      'every delivery to a faulty receiver to have failed twice',
      async () => {
        const counts = await Promise.all(
          stillFaulty.map(async (index) =>
            (await deliveries(sluice, destinationIds[index]!)).map((d) => d.attemptCount),
          ),
        )
        return counts.flat()
      },
      (attempts) => attempts.length === stillFaulty.length * count && attempts.every((n) => n >= 2),
      10_000,
      50,
    )
    await Promise.all(receivers.map((r) => r.recover()))

    for (const [index, receiver] of receivers.entries()) {
      await until(
        `every message at the "${receiver.fault}" receiver`,
        () => ids.filter((id) => !receiver.accepted.has(id)).length,
        (missing) => missing === 0,
        10_000,
      )
      const records = await until(
        `every delivery to "${receiver.fault}" recorded as delivered`,
        () => deliveries(sluice, destinationIds[index]!),
        (list) => list.length === count && list.every((d) => d.status === 'delivered'),
        5_000,
      )
      const expected = EXPECTED_ERROR[receiver.fault]
      // A flapping endpoint may take a message on its first try; the others failed every one at first.
      // Every failure is the fault's own (or, on a loaded machine, an answer that came after the
      // deadline); each delivery shows the fault itself. A flapping endpoint may take a message at once.
      const isTheFault = (a: any) =>
        a.errorKind === expected.errorKind && a.statusCode === expected.statusCode
      const showingTheFault = records.filter((d) => d.attempts.some(isTheFault))
      // On a loaded machine every failed attempt of a delivery may have hit the deadline before the
      // fault showed (a reset connection that was not even accepted in time): such a delivery shows
      // timeouts only. Every other delivery must show the fault itself.
      const timeoutsOnly = (d: any) =>
        d.attempts.every((a: any) => a.errorKind === null || a.errorKind === 'timeout')
      const explained = records.filter((d) => d.attempts.some(isTheFault) || timeoutsOnly(d))
      assert.ok(
        showingTheFault.length > 0 && (receiver.fault === 'flapping' || explained.length === count),
        `${receiver.fault}: only ${showingTheFault.length} deliveries show the fault in their attempts ` +
          `(${explained.length - showingTheFault.length} more show timeouts only)`,
      )
      for (const delivery of records) {
        const failures = delivery.attempts.filter((a: any) => a.errorKind !== null)
        for (const failure of failures) {
          assert.ok(
            isTheFault(failure) || failure.errorKind === 'timeout',
            `${receiver.fault}: ${JSON.stringify(failure)}`,
          )
          // Nothing a receiver does holds an attempt past the deadline (the body is never waited for).
          assert.ok(
            failure.latencyMs < REQUEST_TIMEOUT_MS + 1500,
            `${receiver.fault}: ${failure.latencyMs} ms`,
          )
          assert.ok(
            Buffer.byteLength(failure.responseExcerpt ?? '') <= 1024,
            `${receiver.fault}: excerpt over 1 KB`,
          )
        }
        const last = delivery.attempts.at(-1)
        assert.equal(last.statusCode, 200, `${receiver.fault}: the last attempt succeeded`)
      }
    }
    const huge = receivers.find((r) => r.fault === 'huge body')!
    assert.ok(
      huge.hugeBytesWritten < HUGE_BODY_BYTES / 4,
      `Sluice read ${huge.hugeBytesWritten} bytes of a ${HUGE_BODY_BYTES}-byte response body`,
    )
    t.diagnostic(
      `faulty receivers: ${ALL_FAULTS.length} faults x ${count} messages, all delivered after recovery; ` +
        `healthy destination got all ${count} in ${Math.round(healthyMs)} ms meanwhile; ` +
        `requests per fault: ${receivers.map((r) => `${r.fault} ${r.requests}`).join(', ')}; ` +
        `huge body: at most ${(huge.hugeBytesWritten / 1024 / 1024).toFixed(1)} MB of 64 MB written before Sluice hung up`,
    )
  })

  test('past the retry window: dead-lettered, visible through the API, and replay delivers', async (t) => {
    const count = 5
    const windowMs = 1_500
    const sluice = await sluiceWith(windowMs)
    const faults: Fault[] = ['503', 'hang', 'reset', 'down', 'huge body']
    const receivers = await Promise.all(faults.map(faultyReceiver))
    for (const receiver of receivers) cleanup.push(() => receiver.close())
    const { writeKey, destinationIds } = await connect(
      sluice,
      receivers.map((r) => ({ url: r.url, name: r.fault })),
    )
    const ids = await sendMessages(sluice, writeKey, 'dead', count)

    for (const [index, receiver] of receivers.entries()) {
      const failed = await until(
        `every delivery to "${receiver.fault}" to be dead-lettered`,
        () => deliveries(sluice, destinationIds[index]!, 'failed'),
        (list) => list.length === count,
        windowMs + 5_000,
      )
      for (const delivery of failed) {
        assert.equal(delivery.deadLettered, true)
        assert.ok(delivery.attemptCount >= 2, `${receiver.fault}: only ${delivery.attemptCount} attempts`)
        assert.equal(delivery.attempts.length, delivery.attemptCount)
        const expected = EXPECTED_ERROR[receiver.fault]
        // The fault's own error on some attempt; any other is a late answer on a loaded machine.
        assert.ok(
          delivery.attempts.some(
            (a: any) => a.errorKind === expected.errorKind && a.statusCode === expected.statusCode,
          ),
        )
        for (const attempt of delivery.attempts)
          assert.ok([expected.errorKind, 'timeout'].includes(attempt.errorKind))
        // Retried until the window's end, measured from the first attempt: the last one ended after it.
        const first = Date.parse(delivery.attempts[0].attemptedAt)
        const lastEnded =
          Date.parse(delivery.attempts.at(-1).attemptedAt) + delivery.attempts.at(-1).latencyMs
        assert.ok(
          lastEnded - first >= windowMs - 50,
          `${receiver.fault}: attempts span ${lastEnded - first} ms`,
        )
      }
      const stats = await sluice.api('GET', `/api/v1/destinations/${destinationIds[index]}/stats`)
      assert.equal(stats.body.deadLettered, count)
      assert.equal(receiver.accepted.receipts.size, 0)
    }

    // Back up: replay each dead letter through the API; each is delivered.
    await Promise.all(receivers.map((r) => r.recover()))
    for (const [index, receiver] of receivers.entries()) {
      for (const delivery of await deliveries(sluice, destinationIds[index]!, 'failed')) {
        const replayed = await sluice.api('POST', `/api/v1/deliveries/${delivery.id}/replay`)
        assert.equal(replayed.status, 202, JSON.stringify(replayed.body))
        assert.ok(['pending', 'retrying', 'delivered'].includes(replayed.body.status))
      }
      await until(
        `every replayed delivery to "${receiver.fault}" to be delivered`,
        () => deliveries(sluice, destinationIds[index]!),
        (list) => list.length === count && list.every((d) => d.status === 'delivered' && !d.deadLettered),
        5_000,
      )
      assert.deepEqual([...receiver.accepted.receipts.keys()].sort(), [...ids].sort())
    }
    t.diagnostic(
      `dead letters: ${faults.length} faults x ${count} messages dead-lettered after the ${windowMs} ms window, all replayed and delivered`,
    )
  })
})
