/**
 * What the web app's delivery view relies on, on both stores: the deliveries list filtered by message
 * type, userId and time, the exact request a delivery sends, and figures over time from rollups.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type Receiver, startReceiver } from '../deliver/receivers.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { until } from '../reliability/helpers.ts'
import { freshDatabase } from '../store/pg.ts'
import { rawRequest, writeKeyAuth } from './helpers.ts'

const backends = [
  { name: 'SQLite', database: async () => ({ url: undefined, drop: async () => {} }) },
  { name: 'PostgreSQL', database: async () => freshDatabase() },
]

for (const backend of backends) {
  describe(`delivery debugging (${backend.name})`, () => {
    let sluice: TestSluice
    let receiver: Receiver
    let drop: () => Promise<void>
    let destinationId = ''

    before(async () => {
      const database = await backend.database()
      drop = database.drop
      sluice = await startTestSluice(database.url ? { databaseUrl: database.url } : {})
      receiver = await startReceiver()
      const source = await sluice.createSource('Shop')
      const destination = await sluice.api('POST', '/api/v1/destinations', {
        name: 'Hooks',
        type: 'webhooks',
        sourceIds: [source.id],
        settings: {
          webhooks: [{ url: `${receiver.url}/in`, headers: { 'X-Api-Key': 'k-1' } }],
          sharedSecret: 's3',
        },
      })
      destinationId = destination.body.id
      const calls = [
        { type: 'track', userId: 'user-a', event: 'A' },
        { type: 'identify', userId: 'user-b', traits: { plan: 'pro' } },
        { type: 'track', userId: 'user-b', event: 'B' },
      ]
      const sent = await fetch(`${sluice.url}/v1/batch`, {
        method: 'POST',
        headers: { authorization: writeKeyAuth(source.writeKey), 'content-type': 'application/json' },
        body: JSON.stringify({ batch: calls }),
      })
      assert.equal(sent.status, 200)
      await until(
        'every delivery to arrive',
        () => receiver.requests.length,
        (n) => n === 3,
      )
    })
    after(async () => {
      await sluice.close()
      await receiver.close()
      await drop()
    })

    const ids = async (query: string) => {
      const response = await sluice.api('GET', `/api/v1/destinations/${destinationId}/deliveries?${query}`)
      assert.equal(response.status, 200, JSON.stringify(response.body))
      // Sorted: deliveries of one batch may get their ids in any order.
      return response.body.deliveries.map((d: { type: string }) => d.type).sort()
    }

    test('each delivery names its user and event, so a list can show them', async () => {
      const response = await sluice.api('GET', `/api/v1/destinations/${destinationId}/deliveries`)
      const shown = response.body.deliveries
        .map((d: { type: string; userId: string | null; event: string | null }) =>
          [d.type, d.userId, d.event].join(' '),
        )
        .sort()
      assert.deepEqual(shown, ['identify user-b ', 'track user-a A', 'track user-b B'])
    })

    test('deliveries filter by message type, userId and creation time', async () => {
      assert.deepEqual(await ids(''), ['identify', 'track', 'track'])
      assert.deepEqual(await ids('type=track'), ['track', 'track'])
      assert.deepEqual(await ids('userId=user-b'), ['identify', 'track'])
      assert.deepEqual(await ids('type=track&userId=user-b'), ['track'])
      assert.deepEqual(await ids('userId=nobody'), [])
      const hourAgo = new Date(Date.now() - 3_600_000).toISOString()
      const inAnHour = new Date(Date.now() + 3_600_000).toISOString()
      assert.deepEqual((await ids(`since=${hourAgo}&until=${inAnHour}`)).length, 3)
      assert.deepEqual(await ids(`since=${inAnHour}`), [])
      assert.deepEqual(await ids(`until=${hourAgo}`), [])
      const bad = await sluice.api('GET', `/api/v1/destinations/${destinationId}/deliveries?until=yesterday`)
      assert.equal(bad.status, 400)
      assert.equal(bad.body.error.field, '/until')
    })

    test('a delivery shows the exact body and headers it sends; viewers see static header values masked', async () => {
      const [latest] = (await sluice.api('GET', `/api/v1/destinations/${destinationId}/deliveries?limit=1`))
        .body.deliveries
      const shown = await sluice.api('GET', `/api/v1/deliveries/${latest.id}/request`)
      assert.equal(shown.status, 200)
      const received = receiver.requests.find((r) => r.body.toString() === shown.body.body)
      assert.ok(received, 'the body shown is byte for byte the body received')
      const [request] = shown.body.requests
      assert.equal(request.url, `${receiver.url}/in`)
      assert.equal(request.headers['X-Api-Key'], 'k-1')
      assert.equal(request.headers['X-Signature'], received.headers['x-signature'])
      assert.equal(request.headers['User-Agent'], received.headers['user-agent'])

      const viewer = await sluice.api('POST', '/api/v1/tokens', { name: 'v', role: 'viewer' })
      const masked = await rawRequest(sluice.url, 'GET', `/api/v1/deliveries/${latest.id}/request`, {
        authorization: `Bearer ${viewer.body.token}`,
      })
      assert.equal(masked.status, 200)
      assert.equal(masked.body.requests[0].headers['X-Api-Key'], '••••••••')
      assert.ok(!masked.text.includes('k-1'))
    })

    test('figures over time: the same from the attempts before the roll-up and from the rollups after', async () => {
      const to = new Date(Date.now() + 60_000).toISOString()
      const from = new Date(Date.now() - 3_600_000).toISOString()
      const series = async () => {
        const response = await sluice.api(
          'GET',
          `/api/v1/destinations/${destinationId}/stats/series?from=${from}&to=${to}&step=300`,
        )
        assert.equal(response.status, 200, JSON.stringify(response.body))
        return response.body
      }
      const before = await series()
      assert.equal(before.step, 300)
      assert.equal(before.points.length, 13)
      const total = (body: any, key: string) => body.points.reduce((sum: number, p: any) => sum + p[key], 0)
      assert.equal(total(before, 'succeeded'), 3)
      assert.equal(total(before, 'failed'), 0)
      const busy = before.points.filter((p: any) => p.succeeded > 0)
      assert.ok(busy.every((p: any) => p.latencyP50Ms !== null && p.latencyP95Ms >= p.latencyP50Ms))

      // Roll everything up, as the housekeeper would once these minutes are complete.
      const written = await sluice.store.rollUpDeliveries(Date.now() + 10 * 60_000)
      assert.ok(written >= 1)
      assert.deepEqual(await series(), before)

      const bad = await sluice.api('GET', `/api/v1/destinations/${destinationId}/stats/series?step=90`)
      assert.equal(bad.status, 400)
      assert.equal(bad.body.error.field, '/step')
      const backwards = await sluice.api(
        'GET',
        `/api/v1/destinations/${destinationId}/stats/series?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z`,
      )
      assert.equal(backwards.status, 400)
    })
  })
}
