import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Analytics } from '@segment/analytics-node'
import type { Source } from '../../src/domain/sources.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'

let sluice: TestSluice
let source: Source
before(async () => {
  sluice = await startTestSluice()
  source = await sluice.createSource('Segment SDK')
})
after(() => sluice.destroy())

test('the unmodified @segment/analytics-node SDK sends every call type to Sluice', async () => {
  const analytics = new Analytics({ writeKey: source.writeKey, host: sluice.url, flushAt: 10, maxRetries: 0 })
  const errors: unknown[] = []
  analytics.on('error', (error) => errors.push(error))
  analytics.identify({ userId: 'seg-1', traits: { plan: 'pro' }, messageId: 'seg-identify' })
  analytics.track({
    userId: 'seg-1',
    event: 'Order Completed',
    properties: { total: 9.5 },
    messageId: 'seg-track',
  })
  analytics.page({
    userId: 'seg-1',
    name: 'Home',
    properties: { url: 'https://example.com/' },
    messageId: 'seg-page',
  })
  analytics.screen({ userId: 'seg-1', name: 'Settings', messageId: 'seg-screen' })
  analytics.group({ userId: 'seg-1', groupId: 'acme', traits: { size: 5 }, messageId: 'seg-group' })
  analytics.alias({ userId: 'seg-1', previousId: 'anon-9', messageId: 'seg-alias' })
  await analytics.closeAndFlush({ timeout: 10_000 })

  assert.deepEqual(errors, [])
  for (const type of ['identify', 'track', 'page', 'screen', 'group', 'alias']) {
    const message = await sluice.store.getMessage(source.id, `seg-${type}`)
    assert.ok(message, `${type} should arrive`)
    assert.equal(message.type, type)
    const context = message.payload.context as { library?: { name?: string } }
    assert.equal(context.library?.name, '@segment/analytics-node')
    assert.ok(message.payload.originalTimestamp, 'the SDK sends a timestamp')
  }
  const track = await sluice.store.getMessage(source.id, 'seg-track')
  assert.deepEqual(track?.payload.properties, { total: 9.5 })
  assert.equal(track?.payload.event, 'Order Completed')
})
