// Computed traits in the store, on every backend: backfill over existing history, one identify per
// change per destination (committed with the last-sent state), anonymous profiles skipped, windows
// aging out, merges adding up, erasure sending nothing, a destination added later getting every value,
// and two handles evaluating at once sending nothing twice.
import assert from 'node:assert/strict'
import { describe } from 'node:test'
import type { Destination } from '../../src/domain/destinations.ts'
import type { NewComputedTrait } from '../../src/domain/profile-store.ts'
import type { Source } from '../../src/domain/sources.ts'
import { backends, call, drain, type Opened, profileTest, settle, syncPayloads } from './profile-backends.ts'

const DAY = 86_400_000

function trait(overrides: Partial<NewComputedTrait> = {}): NewComputedTrait {
  return {
    name: 'Orders Last 30 Days',
    key: 'orders_last_30_days',
    kind: 'count',
    event: 'Order Completed',
    property: null,
    where: [],
    withinDays: null,
    destinationIds: [],
    ...overrides,
  }
}

/** Every sync identify sent to a destination so far, oldest first, as stored. */
const syncs = syncPayloads

const sent = (payloads: Record<string, any>[]) => payloads.map((p) => [p.userId, p.traits])

for (const backend of backends) {
  describe(`computed traits: ${backend.name}`, () => {
    const withStore = (
      name: string,
      body: (opened: Opened, source: Source, destination: Destination) => Promise<void>,
    ) => profileTest(backend, name, body)

    withStore(
      'created over history: one identify per identified profile with a value, then only changes',
      async ({ store }, web, hook) => {
        await store.ingest([
          call(web, { userId: 'ada', event: 'Order Completed', properties: { total: 10 } }),
          call(web, { userId: 'ada', event: 'Order Completed', properties: { total: 5 } }),
          call(web, { userId: 'bob', event: 'Order Completed' }),
          call(web, { anonymousId: 'anon', event: 'Order Completed' }),
          call(web, { userId: 'cy', event: 'Viewed' }),
        ])
        await drain(store)
        const created = await store.createComputedTrait(trait({ destinationIds: [hook.id] }))
        assert.equal(created?.status, 'computing')
        assert.equal(await store.createComputedTrait(trait()), null, 'the key is taken')
        assert.equal(await settle(store), 2)
        assert.equal((await store.getComputedTrait(created!.id))?.status, 'live')
        const first = await syncs(store, hook)
        assert.deepEqual(sent(first).sort(), [
          ['ada', { orders_last_30_days: 2 }],
          ['bob', { orders_last_30_days: 1 }],
        ])
        assert.equal(first[0]!.type, 'identify')
        assert.deepEqual(first[0]!.context.personas, {
          computation_class: 'computed_trait',
          computation_id: created!.id,
          computation_key: 'orders_last_30_days',
        })
        assert.deepEqual((await store.findProfile({ userId: 'ada' }))?.computedTraits, {
          orders_last_30_days: 2,
        })
        assert.deepEqual((await store.findProfile({ anonymousId: 'anon' }))?.computedTraits, {
          orders_last_30_days: 1,
        })
        assert.deepEqual(
          (await store.findProfile({ userId: 'cy' }))?.computedTraits,
          {},
          'never ordered: no value',
        )

        // A new order changes ada's count: one identify. A call of another event changes nothing.
        await store.ingest([
          call(web, { userId: 'ada', event: 'Order Completed' }),
          call(web, { userId: 'bob', event: 'Viewed' }),
        ])
        assert.equal(await settle(store), 1)
        assert.deepEqual(sent((await syncs(store, hook)).slice(2)), [['ada', { orders_last_30_days: 3 }]])
        // Evaluating an unchanged profile again sends nothing.
        await store.ingest([
          call(web, { userId: 'bob', event: 'Order Completed', properties: { ignored: true } }),
        ])
        await store.updateComputedTrait(created!.id, { name: 'Orders (renamed)' })
        assert.equal(await settle(store), 1, 'only bob changed (1 → 2)')
        assert.equal(
          (await store.getComputedTrait(created!.id))?.key,
          'orders_last_30_days',
          'the key never changes',
        )
        // The sync messages are Sluice's own: they never become calls of a profile.
        const ada = (await store.findProfile({ userId: 'ada' }))!
        const events = (await store.listProfileEvents(ada.id, { limit: 100 })).events
        assert.equal(events.filter((event) => event.type === 'identify').length, 0)
        assert.ok(!(await store.listSources()).some((source) => source.id === 'src_sluice_computed'))
      },
    )

    withStore(
      'every kind reads the property; a window ages out and the new value is sent',
      async ({ store }, web, hook) => {
        const now = Date.now()
        await store.ingest([
          call(
            web,
            { userId: 'u', event: 'Order Completed', properties: { total: 10, sku: 'b' } },
            now - 20 * DAY,
          ),
          call(
            web,
            { userId: 'u', event: 'Order Completed', properties: { total: 4, sku: 'a' } },
            now - 2 * DAY,
          ),
          call(web, { userId: 'u', event: 'Order Completed', properties: { total: 6, sku: 'a' } }, now - DAY),
        ])
        await drain(store)
        const kinds = {
          count: 3,
          sum: 20,
          avg: 20 / 3,
          min: 4,
          max: 10,
          first: 'b',
          last: 'a',
          most_frequent: 'a',
          unique_list: ['a', 'b'],
          unique_list_count: 2,
        } as const
        for (const kind of Object.keys(kinds) as (keyof typeof kinds)[]) {
          const property =
            kind === 'count'
              ? null
              : ['first', 'last', 'most_frequent', 'unique_list', 'unique_list_count'].includes(kind)
                ? 'sku'
                : 'total'
          await store.createComputedTrait(trait({ name: kind, key: `t_${kind}`, kind, property }))
        }
        const windowed = await store.createComputedTrait(
          trait({
            name: 'Recent',
            key: 'recent_orders',
            withinDays: 10,
            destinationIds: [hook.id],
            where: [{ property: 'total', op: '<', value: 100 }],
          }),
        )
        await settle(store, now)
        const profile = (await store.findProfile({ userId: 'u' }))!
        for (const [kind, value] of Object.entries(kinds))
          assert.deepEqual(profile.computedTraits[`t_${kind}`], value, kind)
        assert.equal(profile.computedTraits.recent_orders, 2)
        assert.deepEqual(sent(await syncs(store, hook)), [['u', { recent_orders: 2 }]])

        // Nine days later the two recent orders have left the 10-day window.
        const later = now + 9 * DAY
        assert.equal(await store.queueWindowEdges(now, later), 1)
        assert.equal(await settle(store, later), 1)
        assert.deepEqual(sent(await syncs(store, hook)), [
          ['u', { recent_orders: 2 }],
          ['u', { recent_orders: 0 }],
        ])
        assert.equal((await store.getProfile(profile.id))?.computedTraits.recent_orders, 0)
        assert.ok(windowed)
      },
    )

    withStore(
      'a merge adds histories up; erasure removes values and sends nothing',
      async ({ store }, web, hook) => {
        const created = (await store.createComputedTrait(trait({ destinationIds: [hook.id] })))!
        await store.ingest([
          call(web, { anonymousId: 'device', event: 'Order Completed' }),
          call(web, { userId: 'zoe', event: 'Order Completed' }),
        ])
        await settle(store)
        assert.deepEqual(sent(await syncs(store, hook)), [['zoe', { orders_last_30_days: 1 }]])
        await store.ingest([call(web, { type: 'alias', previousId: 'device', userId: 'zoe' })])
        await settle(store)
        assert.deepEqual(sent((await syncs(store, hook)).slice(1)), [['zoe', { orders_last_30_days: 2 }]])

        assert.equal(await store.eraseProfilesOfUsers(['zoe']), 1)
        assert.equal(await settle(store), 0)
        assert.equal((await syncs(store, hook)).length, 2)
        assert.ok(await store.deleteComputedTrait(created.id))
        assert.equal(await store.getComputedTrait(created.id), null)
      },
    )

    withStore('a destination added later receives every current value once', async ({ store }, web, hook) => {
      const created = (await store.createComputedTrait(trait()))!
      await store.ingest([
        call(web, { userId: 'a', event: 'Order Completed' }),
        call(web, { userId: 'b', event: 'Order Completed' }),
      ])
      assert.equal(await settle(store), 0, 'no destination yet')
      await store.updateComputedTrait(created.id, { destinationIds: [hook.id] })
      assert.equal(await settle(store), 2)
      await store.updateComputedTrait(created.id, { destinationIds: [hook.id] })
      assert.equal(await settle(store), 0, 'never the same value twice in a row')
    })

    withStore(
      'two handles evaluating the same profiles at once send each change exactly once',
      async ({ store, second }, web, hook) => {
        const other = await second()
        await store.createComputedTrait(trait({ destinationIds: [hook.id] }))
        await store.ingest(
          Array.from({ length: 200 }, (_, i) =>
            call(web, { userId: `user-${i % 50}`, event: 'Order Completed' }),
          ),
        )
        await drain(store)
        const evaluators = [store, other, store, other].map(async (handle) => {
          for (let round = 0; round < 50; round++) await handle.evaluateComputations(20)
        })
        await Promise.all(evaluators)
        await settle(store)
        const payloads = await syncs(store, hook)
        assert.equal(payloads.length, 50)
        assert.equal(new Set(payloads.map((p) => p.userId)).size, 50)
        assert.ok(payloads.every((p) => p.traits.orders_last_30_days === 4))
      },
    )
    withStore(
      'disabled: neither evaluated nor synced; enabled again, only what changed is sent',
      async ({ store }, web, hook) => {
        const created = (await store.createComputedTrait(trait({ destinationIds: [hook.id] })))!
        await store.ingest([call(web, { userId: 'ada', event: 'Order Completed' })])
        assert.equal(await settle(store), 1)
        const disabled = await store.updateComputedTrait(created.id, { enabled: false })
        assert.equal(disabled?.status, 'disabled')
        await store.ingest([
          call(web, { userId: 'ada', event: 'Order Completed' }),
          call(web, { userId: 'bob', event: 'Viewed' }),
        ])
        assert.equal(await settle(store), 0, 'nothing is sent while disabled')
        assert.equal((await store.getComputedTrait(created.id))?.status, 'disabled')
        assert.equal((await store.updateComputedTrait(created.id, { enabled: true }))?.status, 'computing')
        assert.equal(await settle(store), 1)
        assert.deepEqual(sent((await syncs(store, hook)).slice(1)), [['ada', { orders_last_30_days: 2 }]])
        assert.equal((await store.getComputedTrait(created.id))?.status, 'live')
        await store.updateComputedTrait(created.id, { enabled: true })
        assert.equal(await settle(store), 0, 'never the same value twice in a row')
      },
    )

    withStore(
      'an evaluation error fails that trait only, with its error; a new definition retries it',
      async ({ store }, web, hook) => {
        const fragile = (await store.createComputedTrait(trait({ destinationIds: [hook.id] })))!
        const sturdy = (await store.createComputedTrait(
          trait({ name: 'Orders', key: 'orders', destinationIds: [hook.id] }),
        ))!
        await store.ingest([call(web, { userId: 'ada', event: 'Order Completed' })])
        assert.equal(await settle(store), 2)
        // A definition the evaluator cannot run (the service would refuse it; the store takes it as given).
        const broken = { ...trait(), where: 'not a list' as unknown as [] }
        await store.updateComputedTrait(fragile.id, { definition: broken })
        await store.ingest([call(web, { userId: 'ada', event: 'Order Completed' })])
        assert.equal(await settle(store), 1, 'the other trait goes on')
        assert.deepEqual(sent((await syncs(store, hook)).slice(2)), [['ada', { orders: 2 }]])
        const failed = (await store.getComputedTrait(fragile.id))!
        assert.equal(failed.status, 'failed')
        assert.match(failed.error ?? '', /\S/)
        assert.equal((await store.getComputedTrait(sturdy.id))?.status, 'live')
        await store.ingest([call(web, { userId: 'ada', event: 'Order Completed' })])
        assert.equal(await settle(store), 1, 'a failed trait is not evaluated')
        const retried = await store.updateComputedTrait(fragile.id, { definition: { ...trait() } })
        assert.equal(retried?.status, 'computing')
        assert.equal(retried?.error, null)
        assert.equal(await settle(store), 1)
        assert.deepEqual(sent((await syncs(store, hook)).slice(4)), [['ada', { orders_last_30_days: 3 }]])
        assert.equal((await store.getComputedTrait(fragile.id))?.status, 'live')
      },
    )

    withStore(
      'a new definition is computed over history and only the values that changed are sent',
      async ({ store }, web, hook) => {
        const created = (await store.createComputedTrait(trait({ destinationIds: [hook.id] })))!
        await store.ingest([
          call(web, { userId: 'ada', event: 'Order Completed', properties: { total: 10 } }),
          call(web, { userId: 'ada', event: 'Order Completed', properties: { total: 5 } }),
          call(web, { userId: 'bob', event: 'Order Completed', properties: { total: 7 } }),
          call(web, { userId: 'cy', event: 'Viewed' }),
        ])
        assert.equal(await settle(store), 2)
        const where = [{ property: 'total', op: '>=' as const, value: 6 }]
        await store.updateComputedTrait(created.id, { definition: { ...trait(), where } })
        assert.equal(await settle(store), 1)
        assert.deepEqual(sent((await syncs(store, hook)).slice(2)), [['ada', { orders_last_30_days: 1 }]])
        // Another event: the old event's profiles are evaluated too (no call of it any more: null).
        const updated = await store.updateComputedTrait(created.id, {
          definition: { ...trait(), event: 'Viewed' },
        })
        assert.equal(updated?.event, 'Viewed')
        assert.equal(await settle(store), 3)
        assert.deepEqual(sent((await syncs(store, hook)).slice(3)).sort(), [
          ['ada', { orders_last_30_days: null }],
          ['bob', { orders_last_30_days: null }],
          ['cy', { orders_last_30_days: 1 }],
        ])
        assert.equal(await store.computationSize(created.id), 1)
      },
    )
  })
}
