/**
 * The delivery part of the management API, end to end: a real Sluice on real SQLite delivering to
 * real HTTP receivers on loopback, observed and driven through its HTTP API only.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import packageJson from '../../package.json' with { type: 'json' }
import { opensslHmacSha1, type Receiver, sleep, startReceiver, unusedPort } from '../deliver/receivers.ts'
import { type ApiResponse, startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send, trackCall } from '../helpers/tracking.ts'
import { rawRequest } from './helpers.ts'

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

interface SwitchableReceiver extends Receiver {
  /** What the receiver answers from now on. */
  state: { status: number; delayMs: number }
  /** The receiver's URL with a path, as configured on destinations. */
  hook: string
}

/** A receiver whose status (and delay before answering) a test can change while it runs. */
async function switchableReceiver(status: number, delayMs = 0): Promise<SwitchableReceiver> {
  const state = { status, delayMs }
  const receiver = await startReceiver((_req, res) => {
    setTimeout(() => {
      res.statusCode = state.status
      res.end(state.status === 200 ? 'ok' : `answering ${state.status}`)
    }, state.delayMs)
  })
  return Object.assign(receiver, { state, hook: `${receiver.url}/hook` })
}

/** Polls `read` until `done` holds; fails the test naming what it waited for. */
async function until<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 5_000,
): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > end) assert.fail(`Timed out waiting for ${what}; last seen: ${JSON.stringify(value)}`)
    await sleep(20)
  }
}

/** A source and a webhooks destination connected to it. */
async function connect(
  sluice: TestSluice,
  urls: string[],
  extra: { enabled?: boolean; sharedSecret?: string } = {},
): Promise<{ writeKey: string; sourceId: string; destinationId: string }> {
  const source = await sluice.createSource()
  const created = await sluice.api('POST', '/api/v1/destinations', {
    name: 'Hook',
    type: 'webhooks',
    enabled: extra.enabled ?? true,
    sourceIds: [source.id],
    settings: {
      webhooks: urls.map((url) => ({ url })),
      ...(extra.sharedSecret === undefined ? {} : { sharedSecret: extra.sharedSecret }),
    },
  })
  assert.equal(created.status, 201, JSON.stringify(created.body))
  return { writeKey: source.writeKey, sourceId: source.id, destinationId: created.body.id }
}

async function track(sluice: TestSluice, writeKey: string, messageId: string): Promise<void> {
  const response = await send(sluice.url, '/v1/track', trackCall({ messageId }), { writeKey })
  assert.equal(response.status, 200, response.text)
}

describe('deliveries management API', () => {
  let sluice: TestSluice
  const receivers: Receiver[] = []
  const receiver = async (status: number, delayMs = 0) => {
    const started = await switchableReceiver(status, delayMs)
    receivers.push(started)
    return started
  }
  const list = (destinationId: string, query = ''): Promise<ApiResponse> =>
    sluice.api('GET', `/api/v1/destinations/${destinationId}/deliveries${query}`)
  const everyDelivery = (status: string, count: number) => (response: ApiResponse) =>
    response.body.deliveries.length === count &&
    response.body.deliveries.every((d: { status: string }) => d.status === status)

  before(async () => {
    // A 1-second retry window, so a failing endpoint dead-letters within the test.
    sluice = await startTestSluice({ retry: { baseDelayMs: 50, maxDelayMs: 200, windowMs: 1000 } })
  })
  after(async () => {
    await sluice.destroy()
    await Promise.all(receivers.map((each) => each.close()))
  })

  test("an anonymous visitor's delivery names its anonymousId", async () => {
    const ok = await receiver(200)
    const { writeKey, destinationId } = await connect(sluice, [ok.hook])
    const call = trackCall({ messageId: 'msg-anon-1', userId: undefined, anonymousId: 'visitor-42' })
    assert.equal((await send(sluice.url, '/v1/track', call, { writeKey })).status, 200)
    const listed = await until(
      'the delivery to be delivered',
      () => list(destinationId),
      everyDelivery('delivered', 1),
    )
    const [delivery] = listed.body.deliveries
    assert.equal(delivery.userId, null)
    assert.equal(delivery.anonymousId, 'visitor-42')
    assert.equal(
      (await sluice.api('GET', `/api/v1/deliveries/${delivery.id}`)).body.anonymousId,
      'visitor-42',
    )
  })

  test('a delivery to an endpoint answering 200 is delivered, with its one attempt', async () => {
    const ok = await receiver(200)
    const { writeKey, sourceId, destinationId } = await connect(sluice, [ok.hook])
    await track(sluice, writeKey, 'msg-ok-1')

    const listed = await until(
      'the delivery to be delivered',
      () => list(destinationId),
      everyDelivery('delivered', 1),
    )
    assert.equal(listed.status, 200)
    assert.equal(listed.body.nextCursor, null)
    const [delivery] = listed.body.deliveries
    const { id, createdAt, updatedAt, firstAttemptAt, attempts, ...rest } = delivery
    assert.deepEqual(rest, {
      destinationId,
      sourceId,
      messageId: 'msg-ok-1',
      type: 'track',
      userId: 'user-1',
      anonymousId: null,
      event: 'Order Completed',
      status: 'delivered',
      deadLettered: false,
      attemptCount: 1,
      nextAttemptAt: null,
    })
    assert.ok(Number.isInteger(id) && id > 0)
    for (const time of [createdAt, updatedAt, firstAttemptAt]) assert.match(time, ISO_8601)
    assert.equal(attempts.length, 1)
    const { attemptedAt, latencyMs, ...attempt } = attempts[0]
    assert.deepEqual(attempt, {
      url: ok.hook,
      statusCode: 200,
      errorKind: null,
      errorText: null,
      responseExcerpt: 'ok',
    })
    assert.match(attemptedAt, ISO_8601)
    assert.ok(Number.isInteger(latencyMs) && latencyMs >= 0, `latencyMs ${latencyMs}`)
    assert.equal(ok.requests.length, 1)

    const one = await sluice.api('GET', `/api/v1/deliveries/${id}`)
    assert.equal(one.status, 200)
    assert.deepEqual(one.body, delivery)
  })

  test('a delivery that keeps failing is dead-lettered, and a replay delivers it', async () => {
    const failing = await receiver(500)
    const { writeKey, destinationId } = await connect(sluice, [failing.hook])
    await track(sluice, writeKey, 'msg-dead-1')

    const listed = await until(
      'the delivery to be dead-lettered',
      () => list(destinationId),
      everyDelivery('failed', 1),
      8_000,
    )
    const [dead] = listed.body.deliveries
    assert.equal(dead.deadLettered, true)
    assert.equal(dead.nextAttemptAt, null)
    assert.ok(dead.attemptCount >= 2, `${dead.attemptCount} attempts`)
    assert.equal(dead.attempts.length, dead.attemptCount)
    assert.equal(failing.requests.length, dead.attemptCount)
    for (const attempt of dead.attempts) {
      assert.deepEqual(
        { ...attempt, attemptedAt: undefined, latencyMs: undefined },
        {
          attemptedAt: undefined,
          url: failing.hook,
          statusCode: 500,
          errorKind: 'http',
          errorText: 'HTTP 500 Internal Server Error',
          latencyMs: undefined,
          responseExcerpt: 'answering 500',
        },
      )
    }
    // Retries stop at the end of the (shrunk) window after the first attempt.
    const span = Date.parse(dead.attempts.at(-1).attemptedAt) - Date.parse(dead.firstAttemptAt)
    assert.ok(span >= 900 && span < 3_000, `attempts spanned ${span} ms`)
    const stats = await sluice.api('GET', `/api/v1/destinations/${destinationId}/stats`)
    assert.deepEqual(
      { ...stats.body, latencyP50Ms: undefined, latencyP95Ms: undefined },
      {
        pending: 0,
        retrying: 0,
        delivered: 0,
        failed: 1,
        deadLettered: 1,
        latencyP50Ms: undefined,
        latencyP95Ms: undefined,
        filtered: 0,
        sampledOut: 0,
      },
    )

    failing.state.status = 200
    const replay = await sluice.api('POST', `/api/v1/deliveries/${dead.id}/replay`)
    assert.equal(replay.status, 202, JSON.stringify(replay.body))
    assert.equal(replay.body.id, dead.id)
    assert.equal(replay.body.status, 'pending')
    assert.equal(replay.body.deadLettered, false)
    assert.match(replay.body.nextAttemptAt, ISO_8601)
    assert.deepEqual(replay.body.attempts, dead.attempts, 'earlier attempts stay as history')

    const delivered = await until(
      'the replayed delivery to be delivered',
      () => sluice.api('GET', `/api/v1/deliveries/${dead.id}`),
      (response) => response.body.status === 'delivered',
    )
    assert.equal(delivered.body.attempts.length, dead.attempts.length + 1)
    assert.equal(delivered.body.attempts.at(-1).statusCode, 200)
    assert.equal(JSON.parse(failing.requests.at(-1)!.body.toString()).messageId, 'msg-dead-1')
  })

  test('bulk replay by status, and by creation time with since', async () => {
    const gone = await receiver(404) // a final answer: failed at once, not retried
    const { writeKey, destinationId } = await connect(sluice, [gone.hook])
    const replay = (query = '') => sluice.api('POST', `/api/v1/destinations/${destinationId}/replay${query}`)
    const byMessage = async () => {
      const response = await list(destinationId)
      return Object.fromEntries(
        response.body.deliveries.map((d: { messageId: string; status: string }) => [d.messageId, d.status]),
      )
    }

    await track(sluice, writeKey, 'bulk-1')
    await until('bulk-1 to fail', () => list(destinationId), everyDelivery('failed', 1))
    await sleep(10)
    const sinceMs = Date.now()
    await sleep(10)
    await track(sluice, writeKey, 'bulk-2')
    await track(sluice, writeKey, 'bulk-3')
    const failed = await until('all three to fail', () => list(destinationId), everyDelivery('failed', 3))
    assert.ok(failed.body.deliveries.every((d: { deadLettered: boolean }) => !d.deadLettered))
    assert.equal(gone.requests.length, 3)

    gone.state.status = 200
    const since = encodeURIComponent(new Date(sinceMs).toISOString())
    const recent = await replay(`?status=failed&since=${since}`)
    assert.equal(recent.status, 202)
    assert.deepEqual(recent.body, { replayed: 2 })
    const afterRecent = await until(
      'bulk-2 and bulk-3 to be delivered',
      byMessage,
      (m) => m['bulk-2'] === 'delivered' && m['bulk-3'] === 'delivered',
    )
    assert.equal(afterRecent['bulk-1'], 'failed')

    // status defaults to failed
    assert.deepEqual((await replay()).body, { replayed: 1 })
    await until('all three to be delivered', () => list(destinationId), everyDelivery('delivered', 3))
    assert.deepEqual((await replay('?status=failed')).body, { replayed: 0 })
    assert.equal(gone.requests.length, 6)

    // Delivered ones go out again when asked; since with a zone offset (+02:00, "+" encoded).
    const shifted = new Date(sinceMs + 2 * 3_600_000).toISOString().replace('Z', '+02:00')
    const again = await replay(`?status=delivered&since=${encodeURIComponent(shifted)}`)
    assert.deepEqual(again.body, { replayed: 2 })
    await until('the two to be delivered again', () => list(destinationId), everyDelivery('delivered', 3))
    await until(
      'the receiver to see them',
      async () => gone.requests.length,
      (n) => n === 8,
    )
    const receivedIds = gone.requests.slice(6).map((r) => JSON.parse(r.body.toString()).messageId)
    assert.deepEqual(receivedIds.sort(), ['bulk-2', 'bulk-3'])

    // A date alone means midnight UTC.
    assert.deepEqual((await replay('?status=delivered&since=2999-01-01')).body, { replayed: 0 })
    assert.deepEqual((await replay('?status=delivered&since=2000-01-01')).body, { replayed: 3 })
    await until('all three to be delivered again', () => list(destinationId), everyDelivery('delivered', 3))

    const badSince = await replay('?since=yesterday')
    assert.equal(badSince.status, 400)
    assert.equal(badSince.body.error.code, 'validation_failed')
    assert.match(
      badSince.body.error.message,
      /"since" must be an ISO 8601 time .*2026-01-31T12:00:00Z.*got "yesterday"/,
    )
    const localTime = await replay('?since=2026-01-31T12:00:00')
    assert.equal(localTime.status, 400, 'a time without a zone is ambiguous')
    const badStatus = await replay('?status=retrying')
    assert.equal(badStatus.status, 400)
    assert.match(
      badStatus.body.error.message,
      /query parameter "status" must be one of: "failed", "delivered"/,
    )
    const typo = await replay('?stauts=delivered')
    assert.equal(typo.status, 400)
    assert.match(typo.body.error.message, /Unknown query parameter "stauts"; allowed: status, since/)
  })

  test('status filter and paging with the before cursor', async () => {
    const slow = await receiver(200, 30)
    const { writeKey, destinationId } = await connect(sluice, [slow.hook])
    const sent = ['page-1', 'page-2', 'page-3', 'page-4', 'page-5']
    for (const messageId of sent) await track(sluice, writeKey, messageId)
    await until('five deliveries', () => list(destinationId), everyDelivery('delivered', 5))

    const pages: Array<{ messageId: string; id: number }[]> = []
    let cursor: number | null = null
    do {
      const query: string = `?status=delivered&limit=2${cursor === null ? '' : `&before=${cursor}`}`
      const page = await list(destinationId, query)
      assert.equal(page.status, 200)
      pages.push(page.body.deliveries)
      cursor = page.body.nextCursor
      if (cursor !== null) assert.equal(cursor, page.body.deliveries.at(-1).id)
    } while (cursor !== null && pages.length < 10)
    assert.deepEqual(
      pages.map((page) => page.length),
      [2, 2, 1],
    )
    const flat = pages.flat()
    assert.deepEqual(
      flat.map((d) => d.messageId),
      [...sent].reverse(),
      'newest first',
    )
    for (let i = 1; i < flat.length; i++) assert.ok(flat[i]!.id < flat[i - 1]!.id)

    const exact = await list(destinationId, '?limit=5')
    assert.equal(exact.body.deliveries.length, 5)
    assert.equal(exact.body.nextCursor, null, 'no next page when exactly `limit` remain')
    assert.deepEqual((await list(destinationId, '?status=failed')).body, { deliveries: [], nextCursor: null })
    assert.equal((await list(destinationId, '?status=pending')).body.deliveries.length, 0)

    const stats = await sluice.api('GET', `/api/v1/destinations/${destinationId}/stats`)
    assert.equal(stats.status, 200)
    const { latencyP50Ms, latencyP95Ms, ...counts } = stats.body
    assert.deepEqual(counts, {
      pending: 0,
      retrying: 0,
      delivered: 5,
      failed: 0,
      deadLettered: 0,
      filtered: 0,
      sampledOut: 0,
    })
    // The receiver waits 30 ms before answering.
    assert.ok(latencyP50Ms >= 25, `p50 ${latencyP50Ms}`)
    assert.ok(latencyP95Ms >= latencyP50Ms, `p95 ${latencyP95Ms}`)
    const destination = await sluice.api('GET', `/api/v1/destinations/${destinationId}`)
    assert.deepEqual(destination.body.stats, stats.body)
    const all = await sluice.api('GET', '/api/v1/destinations')
    assert.deepEqual(
      all.body.destinations.find((d: { id: string }) => d.id === destinationId).stats,
      stats.body,
    )

    const cases: Array<[string, RegExp]> = [
      [
        '?status=bogus',
        /query parameter "status" must be one of: "pending", "retrying", "delivered", "failed"/,
      ],
      [
        '?limit=0',
        /query parameter "limit" must be a whole number from 1 to 500, written in digits; got "0"/,
      ],
      ['?limit=501', /query parameter "limit" must be a whole number from 1 to 500/],
      ['?limit=ten', /query parameter "limit" must be a whole number from 1 to 500/],
      ['?before=0', /query parameter "before" must be a whole number from 1 to 9,007,199,254,740,991/],
      ['?sort=asc', /Unknown query parameter "sort"; allowed: status, limit, before/],
    ]
    for (const [query, message] of cases) {
      const response = await list(destinationId, query)
      assert.equal(response.status, 400, query)
      assert.equal(response.body.error.code, 'validation_failed', query)
      assert.match(response.body.error.message, message, query)
    }
  })

  test('POST /deliveries/:id/replay answers 409 while a delivery is pending or retrying', async () => {
    // A long backoff keeps the delivery in `retrying`.
    const slowRetries = await startTestSluice({ retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 } })
    let release = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const held = await startReceiver((_req, res) => {
      void gate.then(() => res.end('ok'))
    })
    receivers.push(held)
    try {
      const failing = await receiver(503)
      const retrying = await connect(slowRetries, [failing.hook])
      await track(slowRetries, retrying.writeKey, 'still-retrying')
      const listed = await until(
        'the delivery to be retrying',
        () =>
          slowRetries.api('GET', `/api/v1/destinations/${retrying.destinationId}/deliveries?status=retrying`),
        (response) => response.body.deliveries.length === 1,
      )
      const [delivery] = listed.body.deliveries
      assert.ok(Date.parse(delivery.nextAttemptAt) > Date.now() + 30_000, delivery.nextAttemptAt)
      const conflict = await slowRetries.api('POST', `/api/v1/deliveries/${delivery.id}/replay`)
      assert.equal(conflict.status, 409)
      assert.equal(conflict.body.error.code, 'already_scheduled')
      assert.match(
        conflict.body.error.message,
        new RegExp(
          `Delivery ${delivery.id} is retrying, next attempt at ${delivery.nextAttemptAt}: it is already scheduled`,
        ),
      )
      // Bulk replay leaves it alone too.
      const bulk = await slowRetries.api('POST', `/api/v1/destinations/${retrying.destinationId}/replay`)
      assert.deepEqual(bulk.body, { replayed: 0 })
      assert.equal(
        (await slowRetries.api('GET', `/api/v1/deliveries/${delivery.id}`)).body.nextAttemptAt,
        delivery.nextAttemptAt,
      )

      // In flight: the receiver has the request but has not answered.
      const pending = await connect(slowRetries, [`${held.url}/hook`])
      await track(slowRetries, pending.writeKey, 'in-flight')
      await until(
        'the request to reach the receiver',
        async () => held.requests.length,
        (n) => n === 1,
      )
      const inFlight = await slowRetries.api(
        'GET',
        `/api/v1/destinations/${pending.destinationId}/deliveries`,
      )
      assert.equal(inFlight.body.deliveries[0].status, 'pending')
      const busy = await slowRetries.api(
        'POST',
        `/api/v1/deliveries/${inFlight.body.deliveries[0].id}/replay`,
      )
      assert.equal(busy.status, 409)
      assert.match(
        busy.body.error.message,
        /is pending.*already scheduled.*Only delivered or failed deliveries/,
      )
      release()
      await until(
        'the held delivery to be delivered',
        () => slowRetries.api('GET', `/api/v1/destinations/${pending.destinationId}/deliveries`),
        everyDelivery('delivered', 1),
      )
    } finally {
      release()
      await slowRetries.destroy()
    }
  })

  test('POST /destinations/:id/test sends a signed sample track call and reports each answer', async () => {
    const ok = await receiver(200)
    const secret = 'test-secret'
    // Disabled: testing an endpoint before switching it on is the common case.
    const { destinationId } = await connect(sluice, [ok.hook], { enabled: false, sharedSecret: secret })

    const response = await sluice.api('POST', `/api/v1/destinations/${destinationId}/test`)
    assert.equal(response.status, 200, JSON.stringify(response.body))
    const { messageId, results, ...rest } = response.body
    assert.deepEqual(rest, { ok: true })
    assert.equal(results.length, 1)
    const { latencyMs, ...result } = results[0]
    assert.deepEqual(result, {
      url: ok.hook,
      statusCode: 200,
      errorKind: null,
      errorText: null,
      responseExcerpt: 'ok',
    })
    assert.ok(Number.isInteger(latencyMs) && latencyMs >= 0)

    assert.equal(ok.requests.length, 1)
    const [request] = ok.requests
    assert.equal(request!.headers['user-agent'], 'Sluice/1.0')
    assert.equal(request!.headers['content-type'], 'application/json')
    assert.equal(request!.headers['x-signature'], opensslHmacSha1(request!.body, secret))
    const body = JSON.parse(request!.body.toString('utf8'))
    assert.match(body.timestamp, ISO_8601)
    assert.deepEqual(
      { ...body, timestamp: undefined },
      {
        version: 1,
        type: 'track',
        userId: 'sluice-test',
        event: 'Sluice Test Event',
        properties: {},
        context: { library: { name: 'sluice', version: packageJson.version } },
        messageId,
        timestamp: undefined,
      },
    )

    // Not a delivery: nothing recorded, nothing counted.
    assert.deepEqual((await list(destinationId)).body, { deliveries: [], nextCursor: null })
    const stats = await sluice.api('GET', `/api/v1/destinations/${destinationId}/stats`)
    assert.equal(stats.body.delivered + stats.body.pending + stats.body.failed, 0)
    // Each test is a new message.
    const second = await sluice.api('POST', `/api/v1/destinations/${destinationId}/test`)
    assert.notEqual(second.body.messageId, messageId)
  })

  test('POST /destinations/:id/test reports failures: 404, refused connection, and one good URL of several', async () => {
    const notFound = await receiver(404)
    const ok = await receiver(200)
    const closedPort = await unusedPort()

    const missing = await connect(sluice, [notFound.hook])
    const response = await sluice.api('POST', `/api/v1/destinations/${missing.destinationId}/test`)
    assert.equal(response.status, 200)
    assert.equal(response.body.ok, false)
    assert.deepEqual(
      { ...response.body.results[0], latencyMs: undefined },
      {
        url: notFound.hook,
        statusCode: 404,
        errorKind: 'http',
        errorText: 'HTTP 404 Not Found',
        latencyMs: undefined,
        responseExcerpt: 'answering 404',
      },
    )

    const refused = await connect(sluice, [`http://127.0.0.1:${closedPort}/hook`])
    const nobody = await sluice.api('POST', `/api/v1/destinations/${refused.destinationId}/test`)
    assert.equal(nobody.body.ok, false)
    assert.equal(nobody.body.results[0].statusCode, null)
    assert.equal(nobody.body.results[0].errorKind, 'connect')
    assert.match(nobody.body.results[0].errorText, /Connection to 127\.0\.0\.1:\d+ failed/)

    const mixed = await connect(sluice, [notFound.hook, ok.hook])
    const either = await sluice.api('POST', `/api/v1/destinations/${mixed.destinationId}/test`)
    assert.equal(either.body.ok, true)
    assert.deepEqual(
      either.body.results.map((r: { url: string; statusCode: number }) => [r.url, r.statusCode]),
      [
        [notFound.hook, 404],
        [ok.hook, 200],
      ],
    )
  })

  test('unknown ids answer 404 and malformed delivery ids 400, saying what to do', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/destinations/dst_nope/deliveries'],
      ['POST', '/api/v1/destinations/dst_nope/replay'],
      ['POST', '/api/v1/destinations/dst_nope/test'],
      ['GET', '/api/v1/destinations/dst_nope/stats'],
    ] as const) {
      const response = await sluice.api(method, path)
      assert.equal(response.status, 404, path)
      assert.equal(response.body.error.code, 'destination_not_found', path)
      assert.match(
        response.body.error.message,
        /No destination has id "dst_nope"\. List .* GET \/api\/v1\/destinations/,
      )
    }
    for (const [method, path] of [
      ['GET', '/api/v1/deliveries/987654321'],
      ['POST', '/api/v1/deliveries/987654321/replay'],
    ] as const) {
      const response = await sluice.api(method, path)
      assert.equal(response.status, 404, path)
      assert.equal(response.body.error.code, 'delivery_not_found')
      assert.match(response.body.error.message, /No delivery has id 987654321\. List .*deliveries/)
    }
    for (const id of ['abc', '0', '-1', '1.5', '99999999999999999999']) {
      const response = await sluice.api('GET', `/api/v1/deliveries/${id}`)
      assert.equal(response.status, 400, id)
      assert.equal(response.body.error.code, 'invalid_delivery_id', id)
      assert.match(
        response.body.error.message,
        /is not a delivery id: delivery ids are whole numbers such as 42/,
      )
    }
  })

  test('every delivery route requires the admin token', async () => {
    const ok = await receiver(200)
    const { writeKey, destinationId } = await connect(sluice, [ok.hook])
    await track(sluice, writeKey, 'auth-1')
    const listed = await until('a delivery', () => list(destinationId), everyDelivery('delivered', 1))
    const deliveryId = listed.body.deliveries[0].id
    const routes: Array<[string, string]> = [
      ['GET', `/api/v1/destinations/${destinationId}/deliveries`],
      ['GET', `/api/v1/deliveries/${deliveryId}`],
      ['POST', `/api/v1/deliveries/${deliveryId}/replay`],
      ['POST', `/api/v1/destinations/${destinationId}/replay?status=delivered`],
      ['POST', `/api/v1/destinations/${destinationId}/test`],
      ['GET', `/api/v1/destinations/${destinationId}/stats`],
    ]
    for (const [method, path] of routes) {
      for (const authorization of [undefined, 'Bearer wrong-token']) {
        const response = await rawRequest(
          sluice.url,
          method,
          path,
          authorization === undefined ? {} : { authorization },
        )
        assert.equal(response.status, 401, `${method} ${path} with ${authorization ?? 'no token'}`)
        assert.equal(response.body.error.code, 'unauthorized')
      }
    }
    // Nothing was replayed or sent by the refused calls.
    await sleep(50)
    assert.equal(ok.requests.length, 1)
  })

  test('the OpenAPI document describes the delivery routes', async () => {
    const document = (await rawRequest(sluice.url, 'GET', '/api/openapi.json')).body
    const expected: Record<string, string[]> = {
      '/api/v1/destinations/{id}/deliveries': ['get'],
      '/api/v1/deliveries/{id}': ['get'],
      '/api/v1/deliveries/{id}/replay': ['post'],
      '/api/v1/destinations/{id}/replay': ['post'],
      '/api/v1/destinations/{id}/test': ['post'],
      '/api/v1/destinations/{id}/stats': ['get'],
    }
    for (const [path, methods] of Object.entries(expected)) {
      for (const method of methods) {
        const operation = document.paths[path]?.[method]
        assert.ok(operation, `${method} ${path} is documented`)
        assert.deepEqual(operation.tags, ['Deliveries'])
        assert.ok(operation.summary)
        assert.deepEqual(operation.security, [{ adminToken: [] }])
        assert.ok(operation.responses['401'] && operation.responses['404'], `${method} ${path} errors`)
      }
    }
    const listing = document.paths['/api/v1/destinations/{id}/deliveries'].get
    assert.deepEqual(
      listing.parameters
        .filter((p: { in: string }) => p.in === 'query')
        .map((p: { name: string }) => p.name)
        .sort(),
      ['before', 'limit', 'since', 'status', 'type', 'until', 'userId'],
    )
    assert.ok(document.tags.some((tag: { name: string }) => tag.name === 'Deliveries'))
  })
})
