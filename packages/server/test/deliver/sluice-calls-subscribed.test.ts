// Sluice's own calls are judged by each destination's subscription like any other: `delete`
// notifications (as type = "delete") and audience identify calls (as type = "identify"), on both stores.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send, trackCall } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'
import { freshDatabase } from '../store/pg.ts'
import { type Receiver, startReceiver } from './receivers.ts'

const backends = [
  { name: 'SQLite', database: async () => ({ url: undefined, drop: async () => {} }) },
  { name: 'PostgreSQL', database: async () => freshDatabase() },
]

for (const backend of backends) {
  describe(`Sluice's own calls meet subscriptions (${backend.name})`, () => {
    let sluice: TestSluice
    let drop: () => Promise<void>
    let wants: Receiver
    let refuses: Receiver
    const ids = { wants: '', refuses: '' }
    const filtered = async (id: string) =>
      (await sluice.api('GET', `/api/v1/destinations/${id}/stats`)).body.filtered as number

    before(async () => {
      const database = await backend.database()
      drop = database.drop
      sluice = await startTestSluice(database.url ? { databaseUrl: database.url } : {})
      wants = await startReceiver()
      refuses = await startReceiver()
      const source = await sluice.createSource('App')
      const destination = async (name: string, receiver: Receiver, subscription: string) => {
        const response = await sluice.api('POST', '/api/v1/destinations', {
          name,
          type: 'webhooks',
          sourceIds: [source.id],
          settings: { webhooks: [{ url: `${receiver.url}/in` }], subscription },
        })
        assert.equal(response.status, 201, JSON.stringify(response.body))
        return response.body.id as string
      }
      ids.wants = await destination('Wants', wants, 'type = "delete" or traits.big_spenders = true')
      ids.refuses = await destination('Refuses', refuses, 'type = "page"')
      const sent = await send(
        sluice.url,
        '/v1/batch',
        { batch: [trackCall({ userId: 'ada' })] },
        {
          writeKey: source.writeKey,
        },
      )
      assert.equal(sent.status, 200)
    })

    after(async () => {
      await sluice.close()
      await wants.close()
      await refuses.close()
      await drop()
    })

    test('an audience identify goes only to the destination whose subscription matches it', async () => {
      const before = await filtered(ids.refuses)
      const created = await sluice.api('POST', '/api/v1/audiences', {
        name: 'Big Spenders',
        definition: { event: 'Order Completed' },
        destinationIds: [ids.wants, ids.refuses],
      })
      assert.equal(created.status, 201, JSON.stringify(created.body))
      const [identify] = await until(
        'the identify',
        async () => wants.requests.map((request) => JSON.parse(request.body.toString())),
        (bodies) => bodies.some((body) => body.type === 'identify'),
      )
      assert.deepEqual(identify.traits, { big_spenders: true })
      assert.equal(identify.userId, 'ada')
      assert.equal(refuses.requests.length, 0)
      assert.equal(await sluice.store.countDeliveries({ destinationId: ids.refuses }), 0)
      // Counted like any call a subscription keeps out.
      await until(
        'the identify to be counted',
        () => filtered(ids.refuses),
        (n) => n === before + 1,
      )
    })

    test('a delete notification goes only to the destination whose subscription matches type = "delete"', async () => {
      const before = await filtered(ids.refuses)
      const regulation = await sluice.api('POST', '/api/v1/regulations', {
        regulationType: 'DELETE_ONLY',
        subjectType: 'USER_ID',
        subjectIds: ['ada'],
      })
      assert.equal(regulation.status, 201, JSON.stringify(regulation.body))
      await until(
        'the delete notification',
        () => wants.requests.map((request) => JSON.parse(request.body.toString())),
        (bodies) => bodies.some((body) => body.type === 'delete'),
      )
      const finished = await until(
        'the regulation to finish',
        async () => (await sluice.api('GET', `/api/v1/regulations/${regulation.body.id}`)).body,
        (body) => body.status === 'FINISHED',
      )
      assert.deepEqual(
        finished.destinations.map((d: { destinationId: string }) => d.destinationId),
        [ids.wants],
      )
      assert.equal(refuses.requests.length, 0)
      assert.equal(await filtered(ids.refuses), before + 1)
    })
  })
}
