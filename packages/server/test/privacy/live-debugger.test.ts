/**
 * A suppressed user's calls leave no trace anywhere a person can look: the live debugger's stream
 * shows the other calls of the same request, never theirs.
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { LiveCalls } from '../../src/ingest/live-calls.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send, trackCall } from '../helpers/tracking.ts'

let sluice: TestSluice
before(async () => {
  sluice = await startTestSluice()
})
after(() => sluice.destroy())

/** Reads `calls` events from the source's live stream until `count` calls have arrived. */
async function watchCalls(sourceId: string, count: number, ready: () => Promise<void>): Promise<any[]> {
  const controller = new AbortController()
  const response = await fetch(`${sluice.url}/api/v1/sources/${sourceId}/live`, {
    headers: { authorization: `Bearer ${sluice.adminToken}` },
    signal: controller.signal,
  })
  assert.equal(response.status, 200)
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  const calls: any[] = []
  let buffered = ''
  let sent = false
  const timeout = setTimeout(() => controller.abort(), 15_000)
  try {
    while (calls.length < count) {
      const { value, done } = await reader.read()
      if (done) break
      buffered += value
      // The stream opens with a comment line; the request goes out once the watch is in place.
      if (!sent) {
        sent = true
        await ready()
      }
      for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
        const event = buffered.slice(0, end)
        buffered = buffered.slice(end + 2)
        const data = /^data: (.*)$/m.exec(event)
        if (event.startsWith('event: calls') && data) calls.push(...JSON.parse(data[1]!))
      }
    }
  } finally {
    clearTimeout(timeout)
    controller.abort()
  }
  return calls
}

test('the live debugger never shows a suppressed call; the others of its request are there', async () => {
  const source = await sluice.createSource('Watched')
  const suppression = await sluice.api('POST', '/api/v1/regulations', {
    regulationType: 'SUPPRESS_ONLY',
    subjectType: 'USER_ID',
    subjectIds: ['hidden-user'],
  })
  assert.equal(suppression.status, 201, JSON.stringify(suppression.body))

  const calls = await watchCalls(source.id, 2, async () => {
    const answer = await send(
      sluice.url,
      '/v1/batch',
      {
        batch: [
          trackCall({ messageId: 'shown', userId: 'visible-user' }),
          trackCall({ messageId: 'secret', userId: 'hidden-user' }),
          { type: 'track', userId: 'visible-user', messageId: 'bad' }, // no event: rejected
        ],
      },
      { writeKey: source.writeKey },
    )
    assert.equal(answer.status, 200)
    assert.equal(answer.body.accepted, 2)
  })
  assert.deepEqual(
    calls.map((call) => [call.call.messageId, call.status]),
    [
      ['shown', 'accepted'],
      ['bad', 'rejected'],
    ],
  )
  assert.ok(!JSON.stringify(calls).includes('hidden-user'))
})

/** The `history` event a new live stream opens with: the source's recent calls, oldest first. */
async function historyOf(sourceId: string): Promise<any[]> {
  const controller = new AbortController()
  const response = await fetch(`${sluice.url}/api/v1/sources/${sourceId}/live`, {
    headers: { authorization: `Bearer ${sluice.adminToken}` },
    signal: controller.signal,
  })
  assert.equal(response.status, 200)
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffered = ''
  try {
    for (;;) {
      const { value, done } = await reader.read()
      assert.ok(!done, 'the stream ended before its history')
      buffered += value
      const match = /event: history\ndata: (.*)\n\n/.exec(buffered)
      if (match) return JSON.parse(match[1]!)
    }
  } finally {
    controller.abort()
  }
}

test('every call carries its type, also those sent to a single-call path without one', async () => {
  const source = await sluice.createSource('Typed')
  const calls = await watchCalls(source.id, 3, async () => {
    for (const [path, body] of [
      ['/v1/track', { userId: 'u', event: 'Clicked' }],
      ['/v1/identify', { userId: 'u', traits: { plan: 'pro' } }],
      ['/v1/page', { userId: 'u', name: 'Home' }],
    ] as const) {
      assert.equal((await send(sluice.url, path, body, { writeKey: source.writeKey })).status, 200)
    }
  })
  assert.deepEqual(
    calls.map((call) => call.type),
    ['track', 'identify', 'page'],
  )
})

test("a stream opens with the source's last 100 calls; an erased user's are gone", async () => {
  const source = await sluice.createSource('Remembered')
  const batch = Array.from({ length: 105 }, (_, n) =>
    trackCall({ messageId: `m-${n}`, userId: n === 104 ? 'erased-user' : 'kept-user' }),
  )
  assert.equal((await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })).status, 200)
  const history = await historyOf(source.id)
  assert.equal(history.length, 100)
  assert.equal(history[0].call.messageId, 'm-5', 'the oldest five are dropped')
  assert.equal(history[99].call.messageId, 'm-104')
  assert.equal(history[99].type, 'track')

  const erasure = await sluice.api('POST', '/api/v1/regulations', {
    regulationType: 'DELETE_ONLY',
    subjectType: 'USER_ID',
    subjectIds: ['erased-user'],
  })
  assert.equal(erasure.status, 201, JSON.stringify(erasure.body))
  const afterErasure = await historyOf(source.id)
  assert.equal(afterErasure.length, 99)
  assert.ok(!JSON.stringify(afterErasure).includes('erased-user'))
})

test("a deleted source's recent calls are forgotten", () => {
  const live = new LiveCalls()
  live.judged('src_1', [{ type: 'track', userId: 'u', event: 'E' }], {
    accepted: 1,
    rejected: [],
    suppressed: [],
  })
  assert.equal(live.history('src_1').length, 1)
  live.forgetSource('src_1')
  assert.deepEqual(live.history('src_1'), [])
})

test('a rejected call too large to keep is shown as a note, so that the recent calls stay small', async () => {
  const source = await sluice.createSource('Large')
  const huge = trackCall({ messageId: 'huge', properties: { blob: 'x'.repeat(100 * 1024) } })
  const answer = await send(
    sluice.url,
    '/v1/batch',
    { batch: [huge, trackCall({ messageId: 'small' })] },
    { writeKey: source.writeKey },
  )
  assert.equal(answer.body.accepted, 1)
  const history = await historyOf(source.id)
  assert.equal(history.length, 2)
  assert.equal(history[0].status, 'rejected')
  assert.match(history[0].call.note, /larger than 32 KB/)
  assert.ok(JSON.stringify(history).length < 10_000)
  assert.equal(history[1].call.messageId, 'small')
})
