import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestSluice, type TestSluice } from '../../server/test/helpers/sluice.ts'
import { Analytics, type AnalyticsOptions, type FailedEvent, type FetchLike, LIBRARY } from '../src/index.ts'

// The client against the real Sluice server of this repository: its Tracking API, validation,
// deduplication and store, on a random port with a fresh SQLite data dir.

describe('end to end against a real Sluice', () => {
  let sluice: TestSluice
  before(async () => {
    sluice = await startTestSluice()
  })
  after(() => sluice.destroy())

  async function client(options: Partial<AnalyticsOptions> = {}) {
    const source = await sluice.createSource(`analytics e2e ${Math.random()}`)
    const analytics = new Analytics({
      writeKey: source.writeKey,
      endpoint: sluice.url,
      retryBaseDelay: 10,
      ...options,
    })
    const failures: FailedEvent[] = []
    analytics.on('failed', (event) => failures.push(event))
    return { analytics, source, failures }
  }

  test('every call arrives exactly once, stored with its fields', async () => {
    const { analytics, source, failures } = await client({ flushAt: 7 })
    const ids: string[] = []
    for (let i = 0; i < 40; i++) {
      ids.push(analytics.track({ userId: `u${i}`, event: 'Order Completed', properties: { i, total: 12.5 } }))
    }
    ids.push(
      analytics.identify({ userId: 'u1', traits: { email: 'ada@example.com' } }),
      analytics.page({ anonymousId: 'a1', name: 'Pricing', url: 'https://example.com/pricing' }),
      analytics.screen({ userId: 'u1', name: 'Settings' }),
      analytics.group({ userId: 'u1', groupId: 'g1', traits: { plan: 'team' } }),
      analytics.alias({ previousId: 'a1', userId: 'u1' }),
      analytics.track({ userId: 'u1', event: 'Imported', timestamp: '2020-01-02T03:04:05.678Z' }),
    )
    await analytics.close()
    assert.deepEqual(failures, [])
    assert.deepEqual(analytics.stats, { pending: 0, delivered: 46, failed: 0, dropped: 0 })
    assert.equal(await sluice.store.countMessages(source.id), 46)

    const stored = async (messageId: string) => {
      const message = await sluice.store.getMessage(source.id, messageId)
      assert.ok(message, `message ${messageId} is stored`)
      return message.payload as Record<string, Record<string, unknown>> & Record<string, unknown>
    }
    const track = await stored(ids[3]!)
    assert.equal(track.type, 'track')
    assert.equal(track.event, 'Order Completed')
    assert.deepEqual(track.properties, { i: 3, total: 12.5 })
    assert.deepEqual(track.context!.library, LIBRARY)
    assert.equal((await stored(ids[41]!)).properties!.url, 'https://example.com/pricing')
    assert.equal((await stored(ids[44]!)).previousId, 'a1')
    assert.equal((await stored(ids[45]!)).originalTimestamp, '2020-01-02T03:04:05.678Z')
  })

  test('a batch retried after its answer was lost is stored once (same messageIds, server dedupe)', async () => {
    // The first answer is read and then "lost": the client sees a network error and retries.
    let attempts = 0
    const losesFirstAnswer: FetchLike = async (url, init) => {
      const response = await globalThis.fetch(url, init)
      if (attempts++ > 0) return response
      await response.text()
      throw new TypeError('connection reset after the server answered')
    }
    const { analytics, source } = await client({ fetch: losesFirstAnswer })
    const retried: string[] = []
    analytics.on('retry', (event) => retried.push(event.error.kind))
    for (let i = 0; i < 20; i++) analytics.track({ userId: 'u1', event: 'E', properties: { i } })
    await analytics.close()
    assert.deepEqual(retried, ['network'])
    assert.equal(attempts, 2)
    assert.equal(analytics.stats.delivered, 20)
    assert.equal(await sluice.store.countMessages(source.id), 20, 'stored once despite two sends')
    assert.equal(
      (await sluice.store.getSourceStats(source.id)).duplicates,
      20,
      'the second send reached Sluice',
    )
  })

  test('gzip bodies are accepted', async () => {
    const { analytics, source, failures } = await client({ gzip: true })
    for (let i = 0; i < 25; i++) analytics.track({ userId: 'u1', event: 'Compressed', properties: { i } })
    await analytics.close()
    assert.deepEqual(failures, [])
    assert.equal(await sluice.store.countMessages(source.id), 25)
  })

  test('a message Sluice refuses alone is surfaced as rejected; the rest of its batch is stored', async () => {
    // Valid for the client, refused by Sluice: a messageId over Sluice's 256-character limit.
    const { analytics, source, failures } = await client()
    const good = [
      analytics.track({ userId: 'u1', event: 'A' }),
      analytics.track({ userId: 'u1', event: 'B' }),
    ]
    const bad = analytics.track({ userId: 'u1', event: 'C', messageId: 'm'.repeat(300) })
    good.push(analytics.track({ userId: 'u1', event: 'D' }))
    const delivered: string[] = []
    analytics.on('delivered', (event) => delivered.push(...event.messageIds))
    await analytics.close()
    assert.equal(failures.length, 1)
    assert.deepEqual(failures[0]!.messageIds, [bad])
    assert.equal(failures[0]!.error.kind, 'rejected')
    assert.match(failures[0]!.error.message, /messageId is 300 characters; the limit is 256/)
    assert.deepEqual(delivered, good)
    assert.deepEqual(analytics.stats, { pending: 0, delivered: 3, failed: 1, dropped: 0 })
    assert.equal(await sluice.store.countMessages(source.id), 3)
    assert.equal(await sluice.store.getMessage(source.id, bad), null)
  })

  test('an unknown write key is a final 401, reported and not retried', async () => {
    const analytics = new Analytics({ writeKey: 'not-a-key', endpoint: sluice.url })
    const failures: FailedEvent[] = []
    analytics.on('failed', (event) => failures.push(event))
    analytics.track({ userId: 'u1', event: 'E' })
    await analytics.close()
    assert.equal(failures.length, 1)
    assert.equal(failures[0]!.error.status, 401)
    assert.equal(failures[0]!.attempts, 1)
  })
})
