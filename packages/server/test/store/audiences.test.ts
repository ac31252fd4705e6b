// Audiences in the store, on every backend: created over existing users (exactly one `true` per member,
// none for others), entering with a call, leaving with an identify, nothing for a repeated qualifying
// call, a window aging out, anonymous members only with includeAnonymous, computed-trait and audience
// references, erasure sending nothing, and the preview.
import assert from 'node:assert/strict'
import { describe } from 'node:test'
import type { AudienceNode } from '../../src/domain/audiences.ts'
import type { Destination } from '../../src/domain/destinations.ts'
import type { NewAudience } from '../../src/domain/profile-store.ts'
import type { Source } from '../../src/domain/sources.ts'
import type { Store } from '../../src/store/store.ts'
import { COMPUTED_SOURCE_ID } from '../../src/store/tables/computations.ts'
import { backends, call, drain, type Opened, profileTest, settle, syncPayloads } from './profile-backends.ts'

const DAY = 86_400_000

const BIG_SPENDERS: AudienceNode = {
  all: [
    { event: 'Order Completed', where: [{ property: 'total', op: '>=', value: 100 }] },
    { not: { trait: 'plan', op: '=', value: 'free' } },
  ],
}

function audience(destination: Destination, overrides: Partial<NewAudience> = {}): NewAudience {
  return {
    name: 'Big Spenders!',
    key: 'big_spenders',
    definition: BIG_SPENDERS,
    destinationIds: [destination.id],
    includeAnonymous: false,
    ...overrides,
  }
}

/** An audience of buyers, and a buyer each for `gone` and `stays`, consumed into profiles. */
async function buyersGoneAndStays(store: Store, web: Source, hook: Destination): Promise<void> {
  await store.createAudience(
    audience(hook, { name: 'Buyers', key: 'buyers', definition: { event: 'Order Completed' } }),
  )
  await store.ingest([
    call(web, { userId: 'gone', event: 'Order Completed' }),
    call(web, { userId: 'stays', event: 'Order Completed' }),
  ])
  await drain(store)
}

/** The identify calls sent to a destination since `from`, as [userId or anonymousId, traits]. */
async function sentTo(store: Store, destination: Destination, from = 0): Promise<[string, unknown][]> {
  return (await syncPayloads(store, destination))
    .slice(from)
    .map((payload) => [(payload.userId ?? `anon:${payload.anonymousId}`) as string, payload.traits])
}

for (const backend of backends) {
  describe(`audiences: ${backend.name}`, () => {
    const withStore = (
      name: string,
      body: (opened: Opened, source: Source, destination: Destination) => Promise<void>,
    ) => profileTest(backend, name, body)

    withStore(
      'the life of a membership: created over history, enter, repeat, leave',
      async ({ store }, web, hook) => {
        await store.ingest([
          call(web, { userId: 'ada', event: 'Order Completed', properties: { total: 150 } }),
          call(web, { userId: 'bob', event: 'Order Completed', properties: { total: 20 } }),
          call(web, { type: 'identify', userId: 'cy', traits: { plan: 'free' } }),
          call(web, { userId: 'cy', event: 'Order Completed', properties: { total: 500 } }),
          call(web, { anonymousId: 'visitor', event: 'Order Completed', properties: { total: 999 } }),
        ])
        await drain(store)
        const created = (await store.createAudience(audience(hook)))!
        assert.equal(created.key, 'big_spenders')
        assert.equal(created.status, 'computing')
        assert.equal(await store.createAudience(audience(hook)), null, 'the key is taken')
        await settle(store)
        assert.deepEqual(await sentTo(store, hook), [['ada', { big_spenders: true }]])
        assert.equal((await store.getAudience(created.id))?.status, 'live')
        assert.equal(await store.computationSize(created.id), 2, 'ada and the anonymous visitor')
        assert.deepEqual((await store.findProfile({ userId: 'ada' }))?.audiences, ['big_spenders'])
        assert.ok((await store.getAudience(created.id))?.lastSyncAt)

        // bob qualifies with a big order: one true.
        await store.ingest([
          call(web, { userId: 'bob', event: 'Order Completed', properties: { total: 300 } }),
        ])
        await settle(store)
        assert.deepEqual(await sentTo(store, hook, 1), [['bob', { big_spenders: true }]])
        // Another qualifying order changes nothing.
        await store.ingest([
          call(web, { userId: 'bob', event: 'Order Completed', properties: { total: 700 } }),
        ])
        await settle(store)
        assert.equal((await sentTo(store, hook)).length, 2)
        // Downgrading to the free plan: one false.
        await store.ingest([call(web, { type: 'identify', userId: 'bob', traits: { plan: 'free' } })])
        await settle(store)
        assert.deepEqual(await sentTo(store, hook, 2), [['bob', { big_spenders: false }]])
        assert.deepEqual((await store.findProfile({ userId: 'bob' }))?.audiences, [])
        // An identify that changes nothing about membership sends nothing.
        await store.ingest([call(web, { type: 'identify', userId: 'bob', traits: { city: 'Oslo' } })])
        await settle(store)
        assert.equal((await sentTo(store, hook)).length, 3)
      },
    )

    withStore(
      "a deletion request cancels a member's unsent identify and erases it with the user's calls",
      async ({ store }, web, hook) => {
        await buyersGoneAndStays(store, web, hook)
        assert.equal(await settle(store), 2, 'both enter, neither identify sent yet')
        await store.createRegulation({ type: 'DELETE_ONLY', subjectIds: ['gone'], sourceIds: null })
        assert.deepEqual(
          await sentTo(store, hook),
          [['stays', { buyers: true }]],
          "gone's identify is cancelled",
        )
        while ((await store.eraseNext(100)) !== null) {}
        assert.equal(
          await store.countMessages(COMPUTED_SOURCE_ID),
          1,
          "gone's identify is erased, stays' kept",
        )
      },
    )

    withStore(
      'an identify evaluated before a deletion request and committed after it is not stored',
      async ({ store }, web, hook) => {
        await buyersGoneAndStays(store, web, hook)
        const regulation = await store.createRegulation({
          type: 'DELETE_ONLY',
          subjectIds: ['gone'],
          sourceIds: null,
        })
        while ((await store.eraseNext(100)) !== null) {}
        // The evaluation as it stands when it read the profiles a moment before the request and
        // commits after the request's erasure ran.
        await settle(store, regulation.createdAt - 1)
        assert.deepEqual(await sentTo(store, hook), [['stays', { buyers: true }]])
        assert.equal(await store.countMessages(COMPUTED_SOURCE_ID), 1, "only stays' identify is stored")
      },
    )

    withStore('a short window ages out: false', async ({ store }, web, hook) => {
      const now = Date.now()
      await store.ingest([call(web, { userId: 'u', event: 'Login' }, now - DAY / 2)])
      await drain(store)
      await store.createAudience(
        audience(hook, { name: 'Active', key: 'active', definition: { event: 'Login', withinDays: 1 } }),
      )
      await settle(store, now)
      assert.deepEqual(await sentTo(store, hook), [['u', { active: true }]])
      const later = now + DAY
      assert.equal(await store.queueWindowEdges(now, later), 1)
      await settle(store, later)
      assert.deepEqual(await sentTo(store, hook, 1), [['u', { active: false }]])
    })

    withStore('anonymous members are synced only with includeAnonymous', async ({ store }, web, hook) => {
      await store.ingest([
        call(web, { anonymousId: 'visitor', event: 'Viewed' }),
        call(web, { userId: 'u', event: 'Viewed' }),
      ])
      await drain(store)
      await store.createAudience(
        audience(hook, { name: 'Viewers', key: 'viewers', definition: { event: 'Viewed' } }),
      )
      await store.createAudience(
        audience(hook, {
          name: 'All Viewers',
          key: 'all_viewers',
          definition: { event: 'Viewed' },
          includeAnonymous: true,
        }),
      )
      await settle(store)
      const sent = (await sentTo(store, hook))
        .map(([who, traits]) => `${who} ${JSON.stringify(traits)}`)
        .sort()
      assert.deepEqual(sent, [
        'anon:visitor {"all_viewers":true}',
        'u {"all_viewers":true}',
        'u {"viewers":true}',
      ])
      const anonymous = (await store.listDeliveries(hook.id, { limit: 10 })).find(
        (d) => d.messageId !== undefined,
      )
      assert.ok(anonymous)
    })

    withStore(
      'computed trait and audience references; erasure leaves with nothing sent',
      async ({ store }, web, hook) => {
        await store.createComputedTrait({
          name: 'Orders',
          key: 'orders',
          kind: 'count',
          event: 'Order Completed',
          property: null,
          where: [],
          withinDays: null,
          destinationIds: [],
        })
        await store.createAudience(
          audience(hook, {
            name: 'Loyal',
            key: 'loyal',
            destinationIds: [],
            definition: { computedTrait: 'orders', op: '>=', value: 2 },
          }),
        )
        await store.createAudience(
          audience(hook, {
            name: 'Loyal Pro',
            key: 'loyal_pro',
            definition: { all: [{ audience: 'loyal' }, { trait: 'plan', op: 'in', value: ['pro', 'team'] }] },
          }),
        )
        await store.ingest([
          call(web, { type: 'identify', userId: 'p', traits: { plan: 'pro' } }),
          call(web, { userId: 'p', event: 'Order Completed' }),
        ])
        await settle(store)
        assert.deepEqual(await sentTo(store, hook), [])
        await store.ingest([call(web, { userId: 'p', event: 'Order Completed' })])
        await settle(store)
        assert.deepEqual(await sentTo(store, hook), [['p', { loyal_pro: true }]])
        const preview = await store.previewAudience(
          { audience: 'loyal_pro' },
          { includeAnonymous: false, sampleSize: 5 },
        )
        assert.equal(preview.size, 1)
        assert.deepEqual(preview.sample, [(await store.findProfile({ userId: 'p' }))!.id])
        assert.deepEqual(
          await store.previewAudience(
            { not: { audience: 'loyal_pro' } },
            { includeAnonymous: false, sampleSize: 5 },
          ),
          { size: 0, sample: [] },
        )

        assert.equal(await store.eraseProfilesOfUsers(['p']), 1)
        await settle(store)
        assert.equal((await sentTo(store, hook)).length, 1, 'no false for an erased user')
        const loyalPro = (await store.listAudiences()).find((a) => a.key === 'loyal_pro')!
        assert.equal(await store.computationSize(loyalPro.id), 0)
        assert.ok(await store.deleteAudience(loyalPro.id))
        assert.equal(await store.getAudience(loyalPro.id), null)
      },
    )
    withStore(
      'a definition edit and a disable/enable send only the memberships that changed',
      async ({ store }, web, hook) => {
        await store.ingest([
          call(web, { userId: 'ada', event: 'Order Completed', properties: { total: 150 } }),
          call(web, { userId: 'ada', event: 'Order Completed', properties: { total: 150 } }),
          call(web, { userId: 'bob', event: 'Order Completed', properties: { total: 150 } }),
        ])
        const created = (await store.createAudience(audience(hook)))!
        await settle(store)
        assert.deepEqual((await sentTo(store, hook)).sort(), [
          ['ada', { big_spenders: true }],
          ['bob', { big_spenders: true }],
        ])
        const twice: AudienceNode = { event: 'Order Completed', count: { op: '>=', value: 2 } }
        const edited = await store.updateAudience(created.id, { definition: twice })
        assert.equal(edited?.status, 'computing')
        assert.deepEqual(edited?.definition, twice)
        await settle(store)
        assert.deepEqual(await sentTo(store, hook, 2), [['bob', { big_spenders: false }]])
        assert.equal(await store.computationSize(created.id), 1)

        assert.equal((await store.updateAudience(created.id, { enabled: false }))?.status, 'disabled')
        await store.ingest([call(web, { userId: 'bob', event: 'Order Completed' })])
        assert.equal(await settle(store), 0, 'nothing is sent while disabled')
        await store.updateAudience(created.id, { enabled: true })
        await settle(store)
        assert.deepEqual(await sentTo(store, hook, 3), [['bob', { big_spenders: true }]])
        assert.equal((await store.getAudience(created.id))?.status, 'live')
      },
    )
  })
}
