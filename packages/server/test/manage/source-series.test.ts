/**
 * A source's calls over time (`GET /sources/:id/stats/series`), on both stores: the figures the ingest
 * commit keeps per source and minute count every stored call once, in the minute it was received, and
 * nothing for duplicates or other sources.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { freshDatabase } from '../store/pg.ts'
import { rawRequest, writeKeyAuth } from './helpers.ts'

const backends = [
  { name: 'SQLite', database: async () => ({ url: undefined, drop: async () => {} }) },
  { name: 'PostgreSQL', database: async () => freshDatabase() },
]

interface Point {
  at: string
  accepted: number
}

const total = (points: Point[]) => points.reduce((sum, point) => sum + point.accepted, 0)

for (const backend of backends) {
  describe(`source series (${backend.name})`, () => {
    let sluice: TestSluice
    let drop: () => Promise<void>
    let sourceId = ''
    let otherId = ''

    before(async () => {
      const database = await backend.database()
      drop = database.drop
      sluice = await startTestSluice(database.url ? { databaseUrl: database.url } : {})
      const source = await sluice.createSource('Shop')
      const other = await sluice.createSource('Blog')
      sourceId = source.id
      otherId = other.id
      const send = async (writeKey: string, batch: Record<string, unknown>[]) => {
        const sent = await fetch(`${sluice.url}/v1/batch`, {
          method: 'POST',
          headers: { authorization: writeKeyAuth(writeKey), 'content-type': 'application/json' },
          body: JSON.stringify({ batch }),
        })
        assert.equal(sent.status, 200)
      }
      // Three stored calls; the repeat of m-1 (in the batch and in a later request) is a duplicate.
      await send(source.writeKey, [
        { type: 'track', userId: 'u-1', event: 'A', messageId: 'm-1' },
        { type: 'track', userId: 'u-1', event: 'A', messageId: 'm-1' },
        { type: 'identify', userId: 'u-2', messageId: 'm-2' },
      ])
      await send(source.writeKey, [
        { type: 'track', userId: 'u-1', event: 'A', messageId: 'm-1' },
        { type: 'page', anonymousId: 'a-1', messageId: 'm-3' },
      ])
      await send(other.writeKey, [{ type: 'track', userId: 'u-9', event: 'B', messageId: 'm-1' }])
    })
    after(async () => {
      await sluice.close()
      await drop()
    })

    const series = async (id: string, query: string) => {
      const response = await sluice.api('GET', `/api/v1/sources/${id}/stats/series?${query}`)
      assert.equal(response.status, 200, JSON.stringify(response.body))
      return response.body as { from: string; to: string; step: number; points: Point[] }
    }

    test('counts the calls each source stored, not its duplicates, in steps over the range', async () => {
      const from = new Date(Date.now() - 3_600_000).toISOString()
      const to = new Date(Date.now() + 60_000).toISOString()
      const body = await series(sourceId, `from=${from}&to=${to}&step=300`)
      assert.equal(body.step, 300)
      assert.equal(body.points.length, 13)
      assert.equal(total(body.points), 3)
      assert.equal(total((await series(otherId, `from=${from}&to=${to}&step=300`)).points), 1)
      // The defaults: the last hour, a point a minute (the current minute included).
      const recent = await series(sourceId, '')
      assert.equal(recent.step, 60)
      assert.ok(recent.points.length === 60 || recent.points.length === 61, String(recent.points.length))
      assert.equal(total(recent.points), 3)
      // The counts agree with the source's own counters.
      const shown = await sluice.api('GET', `/api/v1/sources/${sourceId}`)
      assert.equal(shown.body.stats.accepted, 3)
      assert.equal(shown.body.stats.duplicates, 2)
    })

    test('each call counts in the minute it was received', async () => {
      // Calls received at known times, through the store as the Tracking API hands them over.
      const base = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 5 * 3_600_000
      const message = (messageId: string, receivedAt: number) => ({
        sourceId: otherId,
        messageId,
        type: 'track' as const,
        receivedAt,
        routeTo: [],
        payloadJson: JSON.stringify({ type: 'track', event: 'Old', messageId }),
      })
      const outcome = await sluice.store.ingest([
        message('old-1', base + 10_000),
        message('old-2', base + 50_000),
        message('old-3', base + 60_000),
        message('old-4', base + 7 * 60_000 + 1),
      ])
      assert.deepEqual(outcome.stored, [true, true, true, true])
      const body = await series(
        otherId,
        `from=${new Date(base).toISOString()}&to=${new Date(base + 10 * 60_000).toISOString()}`,
      )
      assert.equal(body.from, new Date(base).toISOString())
      assert.deepEqual(
        body.points.map((point) => point.accepted),
        [2, 1, 0, 0, 0, 0, 0, 1, 0, 0],
      )
      // A step of 5 minutes sums them.
      const coarse = await series(
        otherId,
        `from=${new Date(base).toISOString()}&to=${new Date(base + 10 * 60_000).toISOString()}&step=300`,
      )
      assert.deepEqual(
        coarse.points.map((point) => [point.at, point.accepted]),
        [
          [new Date(base).toISOString(), 3],
          [new Date(base + 5 * 60_000).toISOString(), 1],
        ],
      )
    })

    test('viewers may read it; a bad range or an unknown source is refused with the reason', async () => {
      const viewer = await sluice.api('POST', '/api/v1/tokens', { name: 'v', role: 'viewer' })
      const read = await rawRequest(sluice.url, 'GET', `/api/v1/sources/${sourceId}/stats/series`, {
        authorization: `Bearer ${viewer.body.token}`,
      })
      assert.equal(read.status, 200)
      const anonymous = await rawRequest(sluice.url, 'GET', `/api/v1/sources/${sourceId}/stats/series`)
      assert.equal(anonymous.status, 401)
      const step = await sluice.api('GET', `/api/v1/sources/${sourceId}/stats/series?step=90`)
      assert.equal(step.status, 400)
      assert.equal(step.body.error.field, '/step')
      const backwards = await sluice.api(
        'GET',
        `/api/v1/sources/${sourceId}/stats/series?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z`,
      )
      assert.equal(backwards.status, 400)
      assert.equal(backwards.body.error.field, '/to')
      const time = await sluice.api('GET', `/api/v1/sources/${sourceId}/stats/series?from=yesterday`)
      assert.equal(time.status, 400)
      assert.match(time.body.error.message, /ISO 8601/)
      const unknown = await sluice.api('GET', '/api/v1/sources/src_nope/stats/series')
      assert.equal(unknown.status, 404)
    })
  })
}
