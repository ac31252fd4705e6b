/**
 * Endpoint health and operational events through the store contract, on every backend: URL states
 * written on change only, the bounded read of recent attempts, events with a quiet period that holds
 * across handles, the alert outbox's leases and results, and dead-lettering deliveries that waited
 * past their window.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { attempt, message, type OpenedStore, type StoreBackend } from './contract.ts'

const URL_A = 'https://a.example.com/hook'

export function healthContract(backend: StoreBackend): void {
  const withStore = (name: string, body: (opened: OpenedStore) => Promise<void>) =>
    test(name, async () => {
      const opened = await backend.open()
      try {
        await body(opened)
      } finally {
        await opened.cleanup()
      }
    })

  async function destinationWith(opened: OpenedStore, messages: number) {
    const source = await opened.store.createSource({ name: 'Health', enabled: true })
    const destination = await opened.store.createDestination({
      name: 'Health hooks',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: { webhooks: [{ url: URL_A, headers: {} }], sharedSecret: null },
    })
    await opened.store.ingest(Array.from({ length: messages }, (_, i) => message(source, `h-${i}`)))
    return destination
  }

  describe(`store contract, endpoint health: ${backend.name}`, () => {
    withStore(
      'URL states: a streak starts once and ends once; disabling and enabling say whether they changed anything',
      async (opened) => {
        const { store } = opened
        const { id } = await destinationWith(opened, 0)
        assert.deepEqual(await store.endpointStates(), [])
        assert.equal(await store.markEndpointFailing(id, URL_A, 1_000), true)
        assert.equal(await store.markEndpointFailing(id, URL_A, 2_000), false)
        assert.equal((await store.endpointStates())[0]?.failingSince, 1_000)
        assert.equal(await store.markEndpointRecovered(id, URL_A, 3_000), true)
        assert.equal(await store.markEndpointRecovered(id, URL_A, 3_000), false)
        assert.equal(await store.disableEndpoint(id, URL_A, 'gone', 4_000), true)
        assert.equal(await store.disableEndpoint(id, URL_A, 'again', 5_000), false)
        const [disabled] = await store.endpointStates()
        assert.deepEqual(
          { at: disabled?.disabledAt, reason: disabled?.disabledReason },
          { at: 4_000, reason: 'gone' },
        )
        // Another handle sees it (the processes share it).
        const other = await opened.second()
        assert.equal((await other.endpointStates())[0]?.disabledAt, 4_000)
        assert.equal(await other.enableEndpoint(id, URL_A, 6_000), true)
        assert.equal(await store.enableEndpoint(id, URL_A, 6_000), false)
        assert.equal((await store.endpointStates())[0]?.disabledAt, null)
        // Gone with its destination.
        await store.deleteDestination(id)
        assert.deepEqual(await store.endpointStates(), [])
      },
    )

    withStore('recent attempts: newest first, bounded', async (opened) => {
      const { store } = opened
      const { id } = await destinationWith(opened, 3)
      const claimed = await store.claimDeliveries(id, 10, Date.now() + 1, 30_000)
      assert.equal(claimed.length, 3)
      await store.recordOutcomes(
        claimed.map((delivery, i) => ({
          deliveryId: delivery.id,
          attempts: [attempt({ attemptedAt: 1_000 + i, statusCode: i === 2 ? 500 : 200 })],
          status: 'delivered',
          deadLettered: false,
          nextAttemptAt: null,
          firstAttemptAt: 1_000,
          closedUrls: [],
        })),
      )
      const recent = await store.recentAttempts(id, 2)
      assert.deepEqual(
        recent.map((a) => [a.attemptedAt, a.statusCode]),
        [
          [1_002, 500],
          [1_001, 200],
        ],
      )
    })

    withStore(
      'operational events: one per quiet period whichever handle records it, and an alert only when wanted',
      async (opened) => {
        const { store } = opened
        const other = await opened.second()
        const event = { type: 'delivery.dead_lettered' as const, subject: 'dst_x', data: { count: 1 } }
        const recorded = await Promise.all([
          store.recordOperationalEvent(event, 10_000, 600_000),
          other.recordOperationalEvent(event, 10_000, 600_000),
        ])
        assert.equal(recorded.filter((e) => e !== null).length, 1)
        assert.equal(recorded.find((e) => e !== null)?.alertStatus, 'none')
        assert.equal(await store.recordOperationalEvent(event, 500_000, 600_000), null)
        await store.putAlertSettings(
          { url: 'https://ops.example.com/a', sharedSecret: 'whsec_x', events: ['delivery.dead_lettered'] },
          1,
        )
        const wanted = await store.recordOperationalEvent(event, 700_000, 600_000)
        assert.equal(wanted?.alertStatus, 'pending')
        const unwanted = await store.recordOperationalEvent(
          { ...event, type: 'regulation.finished' },
          700_000,
        )
        assert.equal(unwanted?.alertStatus, 'none')
        assert.deepEqual(
          (await store.listOperationalEvents(10)).map((e) => [e.type, e.data.count ?? null]),
          [
            ['regulation.finished', 1],
            ['delivery.dead_lettered', 1],
            ['delivery.dead_lettered', 1],
          ],
        )
        assert.equal((await other.getAlertSettings())?.url, 'https://ops.example.com/a')
      },
    )

    withStore('alerts: leased once, retried when asked, settled', async (opened) => {
      const { store } = opened
      await store.putAlertSettings(
        { url: 'https://ops.example.com/a', sharedSecret: 'whsec_x', events: null },
        1,
      )
      const event = await store.recordOperationalEvent(
        { type: 'destination.url.disabled', subject: 's', data: { url: URL_A } },
        1_000,
      )
      assert.ok(event)
      const other = await opened.second()
      const [mine, theirs] = await Promise.all([
        store.claimAlerts(5, 2_000, 30_000),
        other.claimAlerts(5, 2_000, 30_000),
      ])
      assert.equal(mine.length + theirs.length, 1)
      const claimed = mine[0] ?? theirs[0]!
      assert.equal(claimed.id, event.id)
      assert.deepEqual(JSON.parse(claimed.body), {
        type: 'destination.url.disabled',
        timestamp: new Date(1_000).toISOString(),
        data: { url: URL_A },
      })
      await store.recordAlertResult({ id: claimed.id, outcome: 'retry', at: 5_000, error: 'HTTP 500' }, 3_000)
      assert.equal(await store.nextAlertDueAt(), 5_000)
      assert.deepEqual(await store.claimAlerts(5, 4_000, 30_000), [])
      const again = await store.claimAlerts(5, 5_000, 30_000)
      assert.equal(again[0]?.attemptCount, 1)
      await store.recordAlertResult({ id: claimed.id, outcome: 'delivered' }, 6_000)
      const [settled] = await store.listOperationalEvents(1)
      assert.deepEqual([settled?.alertStatus, settled?.attemptCount], ['delivered', 2])
      assert.equal(await store.nextAlertDueAt(), null)
    })

    withStore(
      'waiting deliveries past their window are dead-lettered; younger and leased ones wait on',
      async (opened) => {
        const { store } = opened
        const { id } = await destinationWith(opened, 3)
        const now = Date.now()
        const [leased] = await store.claimDeliveries(id, 1, now + 1, 60_000)
        assert.ok(leased)
        assert.equal(await store.deadLetterWaiting(id, now - 60_000, now), 0)
        assert.equal(await store.deadLetterWaiting(id, now + 10, now + 10), 2)
        const byStatus = (await store.listDeliveries(id, { limit: 10 })).map((d) => [
          d.status,
          d.deadLettered,
        ])
        assert.equal(byStatus.filter(([status, dead]) => status === 'failed' && dead).length, 2)
        assert.equal(byStatus.filter(([status]) => status === 'pending').length, 1)
      },
    )
  })
}
