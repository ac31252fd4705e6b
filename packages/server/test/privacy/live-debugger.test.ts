/**
 * A suppressed user's calls leave no trace anywhere a person can look: the live debugger's stream
 * shows the other calls of the same request, never theirs.
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
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
