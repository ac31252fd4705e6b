/**
 * What the web app lists people with, on both stores: an audience's members page by page with their
 * user ids, the preview's sample with user ids, and profile search by part of an id.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'
import { freshDatabase } from '../store/pg.ts'

const backends = [
  { name: 'SQLite', database: async () => ({ url: undefined, drop: async () => {} }) },
  { name: 'PostgreSQL', database: async () => freshDatabase() },
]

const definition = { event: 'Order Completed' }

for (const backend of backends) {
  describe(`audience members and profile search (${backend.name})`, () => {
    let sluice: TestSluice
    let drop: () => Promise<void>
    let audienceId = ''

    before(async () => {
      const database = await backend.database()
      drop = database.drop
      sluice = await startTestSluice(database.url ? { databaseUrl: database.url } : {})
      const source = await sluice.createSource('Shop')
      const batch = [
        ...['buyer-1', 'buyer-2', 'buyer-3'].map((userId) => ({
          type: 'track',
          userId,
          event: 'Order Completed',
        })),
        { type: 'track', userId: 'browser-1', event: 'Product Viewed' },
        { type: 'identify', anonymousId: 'anon-buyer-9', traits: { plan: 'free' } },
      ]
      assert.equal(
        (await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })).status,
        200,
      )
      await until(
        'the calls in profiles',
        async () => (await sluice.api('GET', '/api/v1/profiles?anonymousId=anon-buyer-9')).status,
        (status) => status === 200,
      )
      const created = await sluice.api('POST', '/api/v1/audiences', { name: 'Buyers', definition })
      assert.equal(created.status, 201, JSON.stringify(created.body))
      audienceId = created.body.id
      await until(
        'the audience to be computed',
        async () => (await sluice.api('GET', `/api/v1/audiences/${audienceId}`)).body.size,
        (size) => size === 3,
      )
    })
    after(async () => {
      await sluice.close()
      await drop()
    })

    test("an audience's members come page by page with their user ids", async () => {
      const first = await sluice.api('GET', `/api/v1/audiences/${audienceId}/members?limit=2`)
      assert.equal(first.status, 200, JSON.stringify(first.body))
      assert.equal(first.body.members.length, 2)
      assert.ok(first.body.nextCursor)
      const second = await sluice.api(
        'GET',
        `/api/v1/audiences/${audienceId}/members?limit=2&after=${first.body.nextCursor}`,
      )
      assert.equal(second.body.nextCursor, null)
      const userIds = [...first.body.members, ...second.body.members].flatMap(
        (member: { userIds: string[] }) => member.userIds,
      )
      assert.deepEqual(userIds.sort(), ['buyer-1', 'buyer-2', 'buyer-3'])
      assert.match(first.body.members[0].profileId, /^prf_/)
      assert.equal((await sluice.api('GET', '/api/v1/audiences/aud_nope/members')).status, 404)
      const tooMany = await sluice.api('GET', `/api/v1/audiences/${audienceId}/members?limit=501`)
      assert.equal(tooMany.status, 400)
    })

    test("a preview's sample names its members' user ids", async () => {
      const preview = await sluice.api('POST', '/api/v1/audiences/preview', { definition })
      assert.equal(preview.status, 200)
      assert.deepEqual(
        preview.body.sampleMembers.map((member: { userIds: string[] }) => member.userIds[0]).sort(),
        ['buyer-1', 'buyer-2', 'buyer-3'],
      )
      assert.deepEqual(
        preview.body.sampleMembers.map((member: { profileId: string }) => member.profileId),
        preview.body.sample,
      )
    })

    test('profiles are found by part of a user id or anonymous id', async () => {
      const search = async (q: string) => {
        const answer = await sluice.api('GET', `/api/v1/profiles/search?q=${encodeURIComponent(q)}`)
        assert.equal(answer.status, 200, JSON.stringify(answer.body))
        return answer.body.profiles
          .flatMap((profile: { userIds: string[]; anonymousIds: string[] }) => [
            ...profile.userIds,
            ...profile.anonymousIds,
          ])
          .sort()
      }
      assert.deepEqual(await search('buyer'), ['anon-buyer-9', 'buyer-1', 'buyer-2', 'buyer-3'])
      assert.deepEqual(await search('wser'), ['browser-1'])
      assert.deepEqual(await search('nobody'), [])
      const short = await sluice.api('GET', '/api/v1/profiles/search?q=b')
      assert.equal(short.status, 400)
      assert.equal(short.body.error.field, '/q')
    })
  })
}
