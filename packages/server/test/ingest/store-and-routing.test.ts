import assert from 'node:assert/strict'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { after, describe, test } from 'node:test'
import type { Destination } from '../../src/domain/destinations.ts'
import type { Source } from '../../src/domain/sources.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send, trackCall } from '../helpers/tracking.ts'

const running: TestSluice[] = []
after(async () => {
  for (const s of running) await s.destroy()
})

/**
 * An API-only Sluice: these tests read what ingest stored and routed, so nothing may deliver (and
 * move a delivery out of `pending`) while they look.
 */
async function start(dataDir?: string): Promise<TestSluice> {
  const sluice = await startTestSluice({ role: 'api', ...(dataDir ? { dataDir } : {}) })
  running.push(sluice)
  return sluice
}

function webhooks(sluice: TestSluice, sourceIds: string[], enabled = true): Promise<Destination> {
  return sluice.store.createDestination({
    name: 'hooks',
    type: 'webhooks',
    enabled,
    sourceIds,
    settings: { webhooks: [{ url: 'https://example.com/hook', headers: {} }], sharedSecret: null },
  })
}

describe('dedupe', () => {
  test('the same messageId from the same source is accepted, dropped, counted, and routed once', async () => {
    const sluice = await start()
    const source = await sluice.createSource()
    const destination = await webhooks(sluice, [source.id])
    for (let i = 0; i < 3; i++) {
      const response = await send(sluice.url, '/v1/track', trackCall({ messageId: 'dup-1' }), {
        writeKey: source.writeKey,
      })
      assert.deepEqual([response.status, response.body], [200, { success: true }])
    }
    // and twice inside one batch
    await send(
      sluice.url,
      '/v1/batch',
      { batch: [trackCall({ messageId: 'dup-2' }), trackCall({ messageId: 'dup-2' })] },
      {
        writeKey: source.writeKey,
      },
    )
    assert.equal(await sluice.store.countMessages(source.id), 2)
    assert.equal(await sluice.store.countDeliveries({ destinationId: destination.id }), 2)
    assert.deepEqual(await sluice.store.getSourceStats(source.id), {
      accepted: 2,
      duplicates: 3,
      rejected: 0,
      suppressed: 0,
    })
  })

  test('the same messageId from another source is a different message', async () => {
    const sluice = await start()
    const a = await sluice.createSource('a')
    const b = await sluice.createSource('b')
    await send(sluice.url, '/v1/track', trackCall({ messageId: 'shared' }), { writeKey: a.writeKey })
    await send(sluice.url, '/v1/track', trackCall({ messageId: 'shared' }), { writeKey: b.writeKey })
    assert.equal(await sluice.store.countMessages(a.id), 1)
    assert.equal(await sluice.store.countMessages(b.id), 1)
  })

  test('after the window a messageId is accepted again', async () => {
    const sluice = await start()
    const source = await sluice.createSource()
    const message = (receivedAt: number) => ({
      sourceId: source.id,
      messageId: 'window',
      type: 'track' as const,
      receivedAt,
      routeTo: [],
      payloadJson: JSON.stringify({ type: 'track', messageId: 'window' }),
    })
    // The store's window is the configured one; the first copy is received just before it.
    const windowMs = sluice.sluice.config.dedupeWindowHours * 3_600_000
    assert.deepEqual((await sluice.store.ingest([message(Date.now() - windowMs - 1_000)])).stored, [true])
    assert.deepEqual((await sluice.store.ingest([message(Date.now())])).stored, [true])
    assert.deepEqual((await sluice.store.ingest([message(Date.now())])).stored, [false])
    assert.equal(await sluice.store.countMessages(source.id), 2)
  })
})

describe('routing at ingest (integrations object, connections, enabled)', () => {
  const cases: [string, Record<string, unknown> | undefined, boolean][] = [
    ['no integrations object', undefined, true],
    ['Webhooks: false', { Webhooks: false }, false],
    ['All: false', { All: false }, false],
    ['All: false, Webhooks: true', { All: false, Webhooks: true }, true],
    ['All: false, Webhooks: options object', { All: false, Webhooks: { any: 1 } }, true],
    ['keys are case sensitive: webhooks: false does not match', { webhooks: false }, true],
    ['other destinations off', { Mixpanel: false }, true],
  ]
  for (const [name, integrations, routed] of cases) {
    test(`${name} → ${routed ? 'delivered' : 'not delivered'}`, async () => {
      const sluice = await start()
      const source = await sluice.createSource()
      const destination = await webhooks(sluice, [source.id])
      await send(sluice.url, '/v1/track', trackCall(integrations ? { integrations } : {}), {
        writeKey: source.writeKey,
      })
      assert.equal(await sluice.store.countMessages(source.id), 1)
      assert.equal(
        await sluice.store.countDeliveries({ destinationId: destination.id, status: 'pending' }),
        routed ? 1 : 0,
      )
    })
  }

  test('only enabled destinations connected to the source get the message', async () => {
    const sluice = await start()
    const a = await sluice.createSource('a')
    const b = await sluice.createSource('b')
    const toA = await webhooks(sluice, [a.id])
    const toBoth = await webhooks(sluice, [a.id, b.id])
    const disabled = await webhooks(sluice, [a.id], false)
    await send(sluice.url, '/v1/track', trackCall(), { writeKey: a.writeKey })
    await send(sluice.url, '/v1/track', trackCall(), { writeKey: b.writeKey })
    assert.equal(await sluice.store.countDeliveries({ destinationId: toA.id }), 1)
    assert.equal(await sluice.store.countDeliveries({ destinationId: toBoth.id }), 2)
    assert.equal(await sluice.store.countDeliveries({ destinationId: disabled.id }), 0)
  })

  test('routing follows destinations and connections changed after calls were routed', async () => {
    const sluice = await start()
    const a = await sluice.createSource('a')
    const b = await sluice.createSource('b')
    let calls = 0
    const track = () =>
      send(sluice.url, '/v1/track', trackCall({ messageId: `changes-${calls++}` }), { writeKey: a.writeKey })
    const deliveries = (destinationId: string) => sluice.store.countDeliveries({ destinationId })

    await track() // routed to nothing: the source's routing is now known
    const destination = await webhooks(sluice, [a.id])
    await track()
    assert.equal(await deliveries(destination.id), 1, 'a destination created later is routed to')

    await sluice.store.updateDestination(destination.id, { enabled: false })
    await track()
    assert.equal(await deliveries(destination.id), 1, 'a disabled destination is not')

    await sluice.store.updateDestination(destination.id, { enabled: true })
    await track()
    assert.equal(await deliveries(destination.id), 2, 'enabled again, it is')

    await sluice.store.updateDestination(destination.id, { sourceIds: [b.id] })
    await track()
    assert.equal(await deliveries(destination.id), 2, 'disconnected from the source, it is not')

    await sluice.store.updateDestination(destination.id, { sourceIds: [a.id, b.id] })
    await track()
    assert.equal(await deliveries(destination.id), 3, 'connected again, it is')

    // A change committed by another connection to the file is seen too.
    const writer = new DatabaseSync(join(sluice.dataDir, 'sluice.db'))
    writer
      .prepare('DELETE FROM destination_sources WHERE destination_id = ? AND source_id = ?')
      .run(destination.id, a.id)
    writer.close()
    await track()
    assert.equal(await deliveries(destination.id), 3, 'disconnected by another connection, it is not')

    const other = await webhooks(sluice, [a.id])
    await sluice.store.deleteSource(b.id)
    await track()
    assert.equal(
      await deliveries(other.id),
      1,
      'a source deleted elsewhere leaves the routing of this one right',
    )
  })
})

describe('durability', () => {
  test('a 200 means committed: a second connection to the file sees the messages at once', async () => {
    const sluice = await start()
    const source = await sluice.createSource()
    const batch = Array.from({ length: 50 }, (_, i) => trackCall({ messageId: `c-${i}` }))
    const responses = await Promise.all(
      [0, 1, 2, 3].map((n) =>
        send(
          sluice.url,
          '/v1/batch',
          { batch: batch.map((m) => ({ ...m, messageId: `${m.messageId}-${n}` })) },
          {
            writeKey: source.writeKey,
          },
        ),
      ),
    )
    assert.ok(responses.every((r) => r.status === 200))
    const reader = new DatabaseSync(join(sluice.dataDir, 'sluice.db'), { readOnly: true })
    const row = reader.prepare('SELECT COUNT(*) AS n FROM messages WHERE source_id = ?').get(source.id) as {
      n: number
    }
    reader.close()
    assert.equal(row.n, 200)
  })

  test('a restart keeps sources, destinations, accepted messages and dedupe keys', async () => {
    const first = await start()
    const source: Source = await first.createSource('kept')
    const destination = await webhooks(first, [source.id])
    await send(first.url, '/v1/track', trackCall({ messageId: 'before-restart' }), {
      writeKey: source.writeKey,
    })
    await first.close()

    const second = await start(first.dataDir)
    assert.deepEqual(await second.store.getSource(source.id), source)
    assert.deepEqual((await second.store.getDestination(destination.id))?.sourceIds, [source.id])
    assert.ok(await second.store.getMessage(source.id, 'before-restart'))
    const again = await send(second.url, '/v1/track', trackCall({ messageId: 'before-restart' }), {
      writeKey: source.writeKey,
    })
    assert.equal(again.status, 200)
    assert.equal(await second.store.countMessages(source.id), 1, 'dedupe survives the restart')
  })

  test('retention: sweep deletes old messages whose deliveries are final, never pending ones', async () => {
    const sluice = await start()
    const source = await sluice.createSource()
    await webhooks(sluice, [source.id])
    const other = await sluice.createSource('no destination')
    await send(sluice.url, '/v1/track', trackCall({ messageId: 'pending-delivery' }), {
      writeKey: source.writeKey,
    })
    await send(sluice.url, '/v1/track', trackCall({ messageId: 'no-delivery' }), { writeKey: other.writeKey })
    // Retention waits for profiles to consume a message; the server's profile worker may not have yet.
    while ((await sluice.store.consumeIntoProfiles()) > 0) {}
    const swept = await sluice.store.sweep(Date.now() + 1)
    assert.equal(swept.messages, 1)
    assert.equal(await sluice.store.getMessage(other.id, 'no-delivery'), null)
    assert.ok(await sluice.store.getMessage(source.id, 'pending-delivery'))
  })
})
