import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Analytics, type DeliveredEvent, type FailedEvent } from '../src/index.ts'
import { startServer, type TestServer } from './helpers/server.ts'

describe('partial acceptance (the Tracking API rejects invalid calls alone)', () => {
  let server: TestServer
  before(async () => {
    server = await startServer((request) => {
      // Refuses messages whose event is "Bad", like Sluice's per-message validation would.
      const rejected = request.body.batch
        .map((message, index) => ({ index, message }))
        .filter(({ message }) => message.event === 'Bad')
        .map(({ index }) => ({ index, error: `.event: "Bad" is not allowed (message ${index})` }))
      if (rejected.length === 0) return {}
      return { body: { success: true, accepted: request.body.batch.length - rejected.length, rejected } }
    })
  })
  after(() => server.close())

  test('each rejected message is a failed event of kind rejected; the rest are delivered', async () => {
    const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url })
    const delivered: DeliveredEvent[] = []
    const failed: FailedEvent[] = []
    analytics.on('delivered', (event) => delivered.push(event))
    analytics.on('failed', (event) => failed.push(event))
    const good1 = analytics.track({ userId: 'u1', event: 'Good' })
    const bad1 = analytics.track({ userId: 'u1', event: 'Bad' })
    const good2 = analytics.track({ userId: 'u1', event: 'Good' })
    const bad2 = analytics.track({ userId: 'u1', event: 'Bad' })
    await analytics.flush()
    assert.deepEqual(
      failed.map((event) => [event.messageIds, event.error.kind, event.error.message, event.error.status]),
      [
        [[bad1], 'rejected', '.event: "Bad" is not allowed (message 1)', 200],
        [[bad2], 'rejected', '.event: "Bad" is not allowed (message 3)', 200],
      ],
    )
    assert.equal(failed[0]!.error.retryable, false)
    assert.deepEqual(delivered, [{ messageIds: [good1, good2], status: 200, attempts: 1 }])
    assert.deepEqual(analytics.stats, { pending: 0, delivered: 2, failed: 2, dropped: 0 })
    // A rejection is final: the batch is not sent again.
    assert.equal(server.requests.length, 1)
    await analytics.close()
  })

  test('a plain {"success":true} delivers the whole batch', async () => {
    const analytics = new Analytics({ writeKey: 'wk', endpoint: server.url })
    const delivered: DeliveredEvent[] = []
    analytics.on('delivered', (event) => delivered.push(event))
    const ids = [analytics.track({ userId: 'u1', event: 'Good' }), analytics.identify({ userId: 'u1' })]
    await analytics.close()
    assert.deepEqual(delivered, [{ messageIds: ids, status: 200, attempts: 1 }])
  })
})
