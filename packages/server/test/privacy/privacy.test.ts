/**
 * Privacy end to end: a real Sluice on real SQLite, recording receivers for several destinations over
 * several sources, driven through the Tracking and management APIs only.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { AcceptedMessage } from '../../src/domain/message-store.ts'
import { opensslHmacSha1, type Receiver, type RecordedRequest, startReceiver } from '../deliver/receivers.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send, trackCall } from '../helpers/tracking.ts'

const SECRET = 'privacy-secret'

/** Polls `read` until `done` holds; fails naming what it waited for. */
async function until<T>(what: string, read: () => Promise<T> | T, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const bodies = (receiver: Receiver) => receiver.requests.map((r) => JSON.parse(r.body.toString()))
const deletesIn = (requests: RecordedRequest[]) =>
  requests.filter((r) => JSON.parse(r.body.toString()).type === 'delete')

/** A receiver answering `state.status` (switchable). */
async function switchable(status: number): Promise<Receiver & { state: { status: number } }> {
  const state = { status }
  const receiver = await startReceiver((_req, res) => {
    res.statusCode = state.status
    res.end(String(state.status))
  })
  return Object.assign(receiver, { state })
}

describe('privacy: deletion and suppression through the APIs', () => {
  let sluice: TestSluice
  before(async () => {
    // Fast retries, so a 503 is followed by a retry within the test.
    sluice = await startTestSluice({ retry: { baseDelayMs: 50, maxDelayMs: 200 } })
  })
  after(() => sluice.destroy())

  const createDestination = async (name: string, sourceIds: string[], urls: string[]) => {
    const created = await sluice.api('POST', '/api/v1/destinations', {
      name,
      type: 'webhooks',
      sourceIds,
      settings: { webhooks: urls.map((url) => ({ url, headers: {} })), sharedSecret: SECRET },
    })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    return created.body.id as string
  }

  test('deletes go once to each destination of an affected source, signed and retried; pending calls are cancelled; data erased', async (t) => {
    const [a, b, c] = [
      await sluice.createSource('A'),
      await sluice.createSource('B'),
      await sluice.createSource('C'),
    ]
    const failing = await switchable(503) // A's destination: everything is retried until it recovers
    const secondUrl = await startReceiver() // aAndB's second URL answers 200: the multi-endpoint rule
    const firstUrl = await switchable(200)
    const onlyC = await startReceiver()
    t.after(async () => {
      for (const receiver of [failing, secondUrl, firstUrl, onlyC]) await receiver.close()
    })
    const toA = await createDestination('A', [a.id], [`${failing.url}/hook`])
    const toAB = await createDestination('A and B', [a.id, b.id], [`${firstUrl.url}/1`, `${secondUrl.url}/2`])
    await createDestination('C', [c.id], [`${onlyC.url}/hook`])

    for (const [source, userId] of [
      [a, 'gone-user'],
      [b, 'gone-user'],
      [c, 'kept-user'],
    ] as const) {
      const sent = await send(sluice.url, '/v1/track', trackCall({ userId }), { writeKey: source.writeKey })
      assert.equal(sent.status, 200)
    }
    // aAndB got both of gone-user's calls; A's destination keeps retrying its one (503).
    await until(
      'aAndB has both calls',
      () => bodies(secondUrl).length,
      (n) => n === 2,
    )
    await until(
      'A is retrying',
      () => failing.requests.length,
      (n) => n >= 2,
    )

    // Both users have profiles by now (the profile worker follows the commits).
    for (const userId of ['gone-user', 'kept-user']) {
      await until(
        `${userId}'s profile`,
        async () => (await sluice.api('GET', `/api/v1/profiles?userId=${userId}`)).status,
        (status) => status === 200,
      )
    }

    const created = await sluice.api('POST', '/api/v1/regulations', {
      regulationType: 'DELETE_ONLY',
      subjectType: 'USER_ID',
      subjectIds: ['gone-user'],
    })
    assert.equal(created.status, 201, JSON.stringify(created.body))
    assert.match(created.headers.get('location') ?? '', /\/api\/v1\/regulations\/reg_/)
    const id = created.body.id as string
    assert.equal(created.body.status, 'INITIALIZED')
    const seenByFailing = failing.requests.length

    // A's pending call of gone-user was cancelled with the 201: once A recovers, only the delete arrives.
    await until(
      'the delete to A, after a 503',
      () => deletesIn(failing.requests).length,
      (n) => n >= 1,
    )
    failing.state.status = 200
    await until(
      'A received its delete',
      () => failing.requests.filter((r) => r.body.length > 0).length,
      () => deletesIn(failing.requests).some((_, i, all) => i === all.length - 1),
    )
    await until(
      'A delivered the delete',
      async () => (await sluice.api('GET', `/api/v1/regulations/${id}`)).body,
      (r) =>
        r.destinations.some(
          (d: { destinationId: string; delivered: number }) => d.destinationId === toA && d.delivered === 1,
        ),
    )
    const afterRegulation = failing.requests.slice(seenByFailing).map((r) => JSON.parse(r.body.toString()))
    assert.ok(
      afterRegulation.every((body) => body.type === 'delete'),
      'no track call went out after the 201',
    )

    // aAndB: exactly one delete, though two of its sources are affected; to the second URL (200).
    await until(
      'aAndB got its delete',
      () => deletesIn(secondUrl.requests).length,
      (n) => n === 1,
    )
    const [deleteRequest] = deletesIn(secondUrl.requests)
    const raw = deleteRequest!.body.toString()
    assert.deepEqual(Object.keys(JSON.parse(raw)), ['type', 'userId', 'timestamp'])
    assert.deepEqual(JSON.parse(raw), {
      type: 'delete',
      userId: 'gone-user',
      timestamp: created.body.createdAt,
    })
    assert.equal(deleteRequest!.headers['x-signature'], opensslHmacSha1(deleteRequest!.body, SECRET))
    assert.equal(deleteRequest!.headers['user-agent'], 'Sluice/1.0')
    // C's destination: no delete (C never heard of gone-user).
    assert.equal(deletesIn(onlyC.requests).length, 0)

    const done = await until(
      'the regulation finished',
      async () => (await sluice.api('GET', `/api/v1/regulations/${id}`)).body,
      (r) => r.status === 'FINISHED',
    )
    assert.equal(done.erased.messages, 2, "gone-user's two calls")
    // The profile goes once the messages are gone (so it cannot be rebuilt from them); the other stays.
    const erasedProfiles = await until(
      'the profile erased',
      async () => (await sluice.api('GET', `/api/v1/regulations/${id}`)).body.erased.profiles,
      (n) => n > 0,
    )
    assert.equal(erasedProfiles, 1)
    assert.equal((await sluice.api('GET', '/api/v1/profiles?userId=gone-user')).status, 404)
    assert.equal((await sluice.api('GET', '/api/v1/profiles?userId=kept-user')).status, 200)
    assert.ok(done.finishedAt)
    assert.deepEqual(
      done.destinations
        .map((d: { destinationId: string; delivered: number; failed: number }) => [
          d.destinationId,
          d.delivered,
          d.failed,
        ])
        .sort(),
      [
        [toA, 1, 0],
        [toAB, 1, 0],
      ].sort(),
    )
    // The deletes are ordinary deliveries in the deliveries API.
    const listed = await sluice.api('GET', `/api/v1/destinations/${toAB}/deliveries`)
    assert.deepEqual(
      listed.body.deliveries.map((d: { type: string; status: string }) => [d.type, d.status]),
      [['delete', 'delivered']],
      "aAndB's delivered calls were erased with their messages; the delete stays",
    )
    assert.equal((await sluice.api('GET', '/api/v1/regulations?status=FINISHED')).body.regulations[0].id, id)
  })

  test('a suppressed user is acknowledged and dropped; UNSUPPRESS restores delivery', async (t) => {
    const source = await sluice.createSource('S')
    const receiver = await startReceiver()
    t.after(() => receiver.close())
    const destinationId = await createDestination('S', [source.id], [`${receiver.url}/hook`])
    const suppressed = await sluice.api('POST', '/api/v1/regulations', {
      regulationType: 'SUPPRESS_ONLY',
      subjectIds: ['quiet-user'],
      sourceIds: [source.id],
    })
    assert.equal(suppressed.status, 201)
    assert.equal(suppressed.body.status, 'FINISHED')
    const listed = await sluice.api('GET', '/api/v1/suppressions')
    assert.deepEqual(
      listed.body.suppressions.map((s: { userId: string; sourceId: string }) => [s.userId, s.sourceId]),
      [['quiet-user', source.id]],
    )

    const batch = await send(
      sluice.url,
      '/v1/batch',
      {
        batch: [
          trackCall({ userId: 'quiet-user', messageId: 'q1' }),
          { type: 'alias', previousId: 'quiet-user', userId: 'new-id', messageId: 'q2' },
          trackCall({ userId: 'loud-user', messageId: 'l1' }),
        ],
      },
      { writeKey: source.writeKey },
    )
    assert.equal(batch.status, 200)
    await until(
      'the loud user arrives',
      () => bodies(receiver).length,
      (n) => n === 1,
    )
    assert.equal(bodies(receiver)[0].userId, 'loud-user')
    assert.equal(await sluice.store.getMessage(source.id, 'q1'), null, 'never stored')
    assert.equal(await sluice.store.getMessage(source.id, 'q2'), null, 'an alias from a suppressed id too')
    const stats = (await sluice.api('GET', `/api/v1/sources/${source.id}`)).body.stats
    assert.deepEqual(stats, { accepted: 1, duplicates: 0, rejected: 0, suppressed: 2 })
    assert.equal(
      (await sluice.api('GET', `/api/v1/destinations/${destinationId}/deliveries`)).body.deliveries.length,
      1,
    )

    const lifted = await sluice.api('POST', '/api/v1/regulations', {
      regulationType: 'UNSUPPRESS',
      subjectIds: ['quiet-user'],
    })
    assert.equal(lifted.status, 201)
    assert.deepEqual((await sluice.api('GET', '/api/v1/suppressions')).body.suppressions, [])
    assert.equal(
      (
        await send(sluice.url, '/v1/track', trackCall({ userId: 'quiet-user', messageId: 'q3' }), {
          writeKey: source.writeKey,
        })
      ).status,
      200,
    )
    await until(
      'the unsuppressed user arrives',
      () => bodies(receiver).length,
      (n) => n === 2,
    )
    assert.equal(bodies(receiver)[1].userId, 'quiet-user')
  })

  test('bad requests get a clear 400 and create nothing', async () => {
    const before = (await sluice.api('GET', '/api/v1/regulations?limit=500')).body.regulations.length
    const cases: [unknown, RegExp][] = [
      [
        { regulationType: 'DELETE_ONLY', subjectIds: Array.from({ length: 6_000 }, (_, i) => `u${i}`) },
        /subjectIds/,
      ],
      [{ regulationType: 'DELETE_ONLY', subjectIds: [] }, /subjectIds/],
      [{ regulationType: 'FORGET_ME', subjectIds: ['u'] }, /regulationType/],
      [
        { regulationType: 'DELETE_ONLY', subjectIds: ['u'], sourceIds: ['src_nope'] },
        /No source has id "src_nope"/,
      ],
      [{ regulationType: 'DELETE_ONLY', subjectIds: ['u'], subjectType: 'EMAIL' }, /subjectType/],
      [{ regulationType: 'DELETE_ONLY' }, /subjectIds/],
    ]
    for (const [body, message] of cases) {
      const answer = await sluice.api('POST', '/api/v1/regulations', body)
      assert.equal(answer.status, 400, JSON.stringify(answer.body))
      assert.equal(answer.body.error.code, 'validation_failed')
      assert.match(`${answer.body.error.message} ${answer.body.error.field ?? ''}`, message)
    }
    assert.equal((await sluice.api('GET', '/api/v1/regulations?limit=500')).body.regulations.length, before)
    assert.equal((await sluice.api('GET', '/api/v1/regulations/reg_missing')).status, 404)
    for (const query of [
      'limit=1e309',
      'limit=0',
      'limit=501',
      'limit=abc',
      'status=DONE',
      'stauts=FINISHED',
    ]) {
      const listed = await sluice.api('GET', `/api/v1/regulations?${query}`)
      assert.equal(listed.status, 400, `${query}: ${JSON.stringify(listed.body)}`)
      assert.equal(listed.body.error.code, 'validation_failed')
    }
  })
})

describe('privacy: a delivery already claimed when the deletion arrives is never sent', () => {
  test('the engine checks before sending', async () => {
    // One slot per destination: the first call holds it at a receiver that does not answer, so the
    // next call is claimed and waits in memory while the deletion is created.
    const sluice = await startTestSluice({ deliveryConcurrency: 1 })
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const receiver = await startReceiver((_req, res, body) => {
      if (JSON.parse(body.toString()).userId === 'holder') void held.then(() => res.end('ok'))
      else res.end('ok')
    })
    try {
      const source = await sluice.createSource('S')
      await sluice.api('POST', '/api/v1/destinations', {
        name: 'slow',
        type: 'webhooks',
        sourceIds: [source.id],
        settings: { webhooks: [{ url: `${receiver.url}/hook`, headers: {} }], sharedSecret: null },
      })
      await send(sluice.url, '/v1/track', trackCall({ userId: 'holder', messageId: 'h' }), {
        writeKey: source.writeKey,
      })
      await until(
        'the holder is in flight',
        () => receiver.requests.length,
        (n) => n === 1,
      )
      await send(sluice.url, '/v1/track', trackCall({ userId: 'gone', messageId: 'g' }), {
        writeKey: source.writeKey,
      })
      // Claimed ahead: its lease is set, so it is in the engine's memory, not just in the store.
      await until(
        'the next call is claimed',
        async () =>
          (await sluice.store.getMessage(source.id, 'g')) !== null && (await claimedCount(sluice)) === 2,
        Boolean,
      )
      const created = await sluice.api('POST', '/api/v1/regulations', {
        regulationType: 'DELETE_ONLY',
        subjectIds: ['gone'],
      })
      assert.equal(created.status, 201)
      release()
      await until('the delete arrives', () => bodies(receiver).some((b) => b.type === 'delete'), Boolean)
      assert.deepEqual(
        bodies(receiver).map((b) => [b.type, b.userId]),
        [
          ['track', 'holder'],
          ['delete', 'gone'],
        ],
        "gone's claimed call was withdrawn before it was sent",
      )
    } finally {
      release()
      await sluice.destroy()
      await receiver.close()
    }
  })
})

describe('privacy: a call received before the deletion but committed after it is never stored or sent', () => {
  test('it is acknowledged, and only the call made after the request goes out', async () => {
    const sluice = await startTestSluice()
    const receiver = await startReceiver()
    try {
      const source = await sluice.createSource('S')
      const created = await sluice.api('POST', '/api/v1/destinations', {
        name: 'hooks',
        type: 'webhooks',
        sourceIds: [source.id],
        settings: { webhooks: [{ url: `${receiver.url}/hook`, headers: {} }], sharedSecret: null },
      })
      const destinationId = created.body.id as string
      const regulation = await sluice.api('POST', '/api/v1/regulations', {
        regulationType: 'DELETE_ONLY',
        subjectIds: ['late'],
      })
      assert.equal(regulation.status, 201)
      // The store as it sees a commit that was in flight when the request was made: received a moment
      // before the request, committed after it (and after its erasure scan).
      const call = (messageId: string, receivedAt: number): AcceptedMessage => ({
        sourceId: source.id,
        messageId,
        type: 'track',
        receivedAt,
        routeTo: ['webhooks'],
        userId: 'late',
        payloadJson: JSON.stringify({
          type: 'track',
          userId: 'late',
          event: 'E',
          messageId,
          timestamp: new Date(receivedAt).toISOString(),
          receivedAt: new Date(receivedAt).toISOString(),
        }),
      })
      const late = await sluice.store.ingest([
        call('late-1', Date.parse(regulation.body.createdAt as string) - 1),
      ])
      assert.deepEqual(late.stored, [true], 'acknowledged: it was received before the request')
      assert.equal(late.deliveriesCreated, 0)
      assert.equal(await sluice.store.getMessage(source.id, 'late-1'), null, 'erased as it arrived')
      await sluice.store.ingest([call('after-1', Date.now())])
      await until(
        'the call made after the request arrives',
        () => bodies(receiver).length,
        (n) => n === 1,
      )
      assert.deepEqual(
        (await sluice.store.listDeliveries(destinationId, { limit: 10 })).map((d) => d.messageId),
        ['after-1'],
      )
      assert.deepEqual(
        bodies(receiver).map((b) => [b.type, b.messageId]),
        [['track', 'after-1']],
        'the call received before the request never goes out; the one after it does',
      )
    } finally {
      await sluice.destroy()
      await receiver.close()
    }
  })
})

/** Deliveries of the store that carry a lease right now (claimed by the engine). */
async function claimedCount(sluice: TestSluice): Promise<number> {
  const destinations = await sluice.store.listDestinations()
  let leased = 0
  for (const destination of destinations) {
    const stats = await sluice.store.deliveryStats(destination.id)
    leased += stats.pending + stats.retrying
  }
  return leased
}
