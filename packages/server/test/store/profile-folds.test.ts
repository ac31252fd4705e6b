// Heavy profiles (dozens of calls and more): evaluation keeps each one's aggregates between steps and
// adds only the newer calls instead of reading the whole history again. The values must stay exact as
// calls arrive, when one of a windowed trait's calls leaves its window, when an alias merges another
// heavy profile in, when a computation is defined after the fold was built, and on PostgreSQL when
// another process made that merge.
import assert from 'node:assert/strict'
import { describe } from 'node:test'
import type { Destination } from '../../src/domain/destinations.ts'
import type { NewComputedTrait } from '../../src/domain/profile-store.ts'
import type { Source } from '../../src/domain/sources.ts'
import type { Store } from '../../src/store/store.ts'
import { backends, call, drain, type Opened, profileTest, settle } from './profile-backends.ts'

const DAY = 86_400_000
const MINUTE = 60_000

function trait(key: string, fields: Partial<NewComputedTrait>): NewComputedTrait {
  return {
    name: key,
    key,
    kind: 'count',
    event: 'Order Completed',
    property: null,
    where: [],
    withinDays: null,
    destinationIds: [],
    ...fields,
  }
}

async function define(store: Store, hook: Destination): Promise<void> {
  await store.createComputedTrait(trait('orders', {}))
  await store.createComputedTrait(trait('spent', { kind: 'sum', property: 'total' }))
  await store.createComputedTrait(trait('skus', { kind: 'unique_list', property: 'sku' }))
  await store.createComputedTrait(trait('last_sku', { kind: 'last', property: 'sku' }))
  await store.createComputedTrait(trait('recent_orders', { withinDays: 1 }))
  await store.createAudience({
    name: 'Big buyers',
    key: 'big_buyers',
    definition: { event: 'Order Completed', count: { op: '>=', value: 60 } },
    destinationIds: [hook.id],
    includeAnonymous: false,
  })
}

/** `count` orders by `userId`: total `total(i)`, sku `sku(i)`, at `at(i)`. */
function orders(
  source: Source,
  userId: string,
  count: number,
  total: (i: number) => number,
  sku: (i: number) => string,
  at: (i: number) => number,
) {
  return Array.from({ length: count }, (_, i) =>
    call(source, { userId, event: 'Order Completed', properties: { total: total(i), sku: sku(i) } }, at(i)),
  )
}

/**
 * Orders `edges[0]` up to `edges.at(-1)` by `userId`, one ingest and evaluation (at `now`) between each
 * pair of edges, so that a fold is built by the first step and brought up to date by the others. The
 * order's number `i` counts from the first edge.
 */
async function orderSteps(
  store: Store,
  source: Source,
  userId: string,
  edges: number[],
  order: { total: (i: number) => number; sku: (i: number) => string; at: (i: number) => number },
  now: number,
): Promise<void> {
  for (let step = 1; step < edges.length; step++) {
    const from = edges[step - 1]!
    await store.ingest(
      orders(
        source,
        userId,
        edges[step]! - from,
        (i) => order.total(from + i),
        (i) => order.sku(from + i),
        (i) => order.at(from + i),
      ),
    )
    await settle(store, now)
  }
}

async function profileOf(store: Store, userId: string): Promise<Record<string, unknown>> {
  const profile = (await store.findProfile({ userId }))!
  return { ...profile.computedTraits, audiences: profile.audiences }
}

for (const backend of backends) {
  describe(`heavy profiles: ${backend.name}`, () => {
    const withStore = (
      name: string,
      body: (opened: Opened, source: Source, destination: Destination) => Promise<void>,
    ) => profileTest(backend, name, body)

    withStore(
      'values stay exact as calls arrive, as a call leaves a window, and across a merge',
      async ({ store }, web, hook) => {
        const now = Date.now()
        await define(store, hook)
        // 40 orders; the first three 1, 2 and 3 minutes inside the one-day window.
        const early = (i: number) => now - DAY + (i + 1) * MINUTE
        await store.ingest(
          orders(
            web,
            'ada',
            40,
            (i) => i,
            (i) => `s${i % 3}`,
            (i) => (i < 3 ? early(i) : now - (40 - i) * 1000),
          ),
        )
        await settle(store, now)
        assert.deepEqual(await profileOf(store, 'ada'), {
          orders: 40,
          spent: 780,
          skus: ['s0', 's1', 's2'],
          last_sku: 's0',
          recent_orders: 40,
          audiences: [],
        })

        // 20 more, one step after the other: now a big buyer.
        await orderSteps(
          store,
          web,
          'ada',
          [40, 45, 60],
          { total: (i) => i, sku: (i) => `s${i % 3}`, at: (i) => now - (60 - i) * 10 },
          now,
        )
        assert.deepEqual(await profileOf(store, 'ada'), {
          orders: 60,
          spent: 1770,
          skus: ['s0', 's1', 's2'],
          last_sku: 's2',
          recent_orders: 60,
          audiences: ['big_buyers'],
        })

        // Two and a half minutes later the first two orders have left the window; a new order
        // brings the profile up again, and its windowed count is counted anew.
        const later = now + 2.5 * MINUTE
        await store.ingest([
          call(
            web,
            { userId: 'ada', event: 'Order Completed', properties: { total: 1000, sku: 'z' } },
            later,
          ),
        ])
        await settle(store, later)
        assert.deepEqual(await profileOf(store, 'ada'), {
          orders: 61,
          spent: 2770,
          skus: ['s0', 's1', 's2', 'z'],
          last_sku: 'z',
          recent_orders: 59,
          audiences: ['big_buyers'],
        })

        // bob, another heavy profile, is aliased to ada: his calls join hers.
        await store.ingest(
          orders(
            web,
            'bob',
            40,
            () => 1,
            () => 'b',
            (i) => later - (40 - i) * 1000,
          ),
        )
        await settle(store, later)
        assert.equal((await profileOf(store, 'bob')).orders, 40)
        await store.ingest([call(web, { type: 'alias', previousId: 'bob', userId: 'ada' }, later)])
        await settle(store, later)
        assert.deepEqual(await profileOf(store, 'ada'), {
          orders: 101,
          spent: 2810,
          skus: ['b', 's0', 's1', 's2', 'z'],
          last_sku: 'z',
          recent_orders: 99,
          audiences: ['big_buyers'],
        })
        assert.equal(
          (await store.findProfile({ userId: 'bob' }))?.id,
          (await store.findProfile({ userId: 'ada' }))?.id,
        )
      },
    )

    withStore(
      "a heavy profile's new calls are added to its aggregates; its history is not read again",
      async ({ store, beside }, web, hook) => {
        const now = Date.now()
        await define(store, hook)
        await store.ingest(
          orders(
            web,
            'ada',
            40,
            () => 1,
            () => 'a',
            (i) => now - (40 - i) * 1000,
          ),
        )
        await settle(store, now)
        assert.equal((await profileOf(store, 'ada')).orders, 40)
        // Take the calls away behind the store's back: an evaluation that read the history again
        // would now count only the new call.
        assert.equal(await beside('DELETE FROM profile_events'), 40)
        await store.ingest([
          call(web, { userId: 'ada', event: 'Order Completed', properties: { total: 1, sku: 'a' } }, now),
        ])
        await settle(store, now)
        assert.deepEqual(await profileOf(store, 'ada'), {
          orders: 41,
          spent: 41,
          skus: ['a'],
          last_sku: 'a',
          recent_orders: 41,
          audiences: [],
        })
      },
    )

    withStore(
      'a computation defined after a profile has a fold is computed over its whole history',
      async ({ store, second, beside }, web, hook) => {
        const now = Date.now()
        await define(store, hook)
        // 50 orders in two steps (the fold is built by the first and brought up to date by the second),
        // totals 0..49, the first ten two days old.
        const at = (i: number) => (i < 10 ? now - 2 * DAY : now - (50 - i) * 1000)
        await orderSteps(store, web, 'ada', [0, 40, 50], { total: (i) => i, sku: () => 'a', at }, now)
        assert.equal((await profileOf(store, 'ada')).orders, 50)
        await store.createComputedTrait(trait('largest', { kind: 'max', property: 'total' }))
        await store.createComputedTrait(
          trait('smallest_recent', { kind: 'min', property: 'total', withinDays: 1 }),
        )
        // A new audience reading a windowed, filtered count: 40 recent orders, 36 of them of 14 or more.
        await store.createAudience({
          name: 'Recent big orders',
          key: 'recent_big_orders',
          definition: {
            event: 'Order Completed',
            where: [{ property: 'total', op: '>=', value: 14 }],
            withinDays: 1,
            count: { op: '=', value: 36 },
          },
          destinationIds: [hook.id],
          includeAnonymous: false,
        })
        await settle(store, now)
        const expected = {
          orders: 50,
          spent: 1225,
          skus: ['a'],
          last_sku: 'a',
          recent_orders: 40,
          largest: 49,
          smallest_recent: 10,
          audiences: ['recent_big_orders'],
        }
        assert.deepEqual(await profileOf(store, 'ada'), expected)
        if (backend.name === 'postgres') {
          // Another process has no fold: queued again, it reads the whole history and changes nothing.
          const other = await second()
          assert.equal(
            await beside(
              `INSERT INTO profile_dirty (profile_id, seq) SELECT id, 1 FROM profiles ON CONFLICT DO NOTHING`,
            ),
            1,
          )
          const { evaluated, deliveriesCreated } = await other.evaluateComputations(500, now)
          assert.deepEqual([evaluated, deliveriesCreated], [1, 0])
          assert.deepEqual(await profileOf(store, 'ada'), expected)
        }
      },
    )

    if (backend.name === 'postgres') {
      withStore(
        'a merge made by another process is seen by the next evaluation of this one',
        async ({ store, second }, web, hook) => {
          const now = Date.now()
          const other = await second()
          await define(store, hook)
          for (const userId of ['ada', 'bob']) {
            await store.ingest(
              orders(
                web,
                userId,
                40,
                () => 1,
                () => userId,
                (i) => now - (40 - i) * 1000,
              ),
            )
          }
          await settle(store, now)
          assert.equal((await profileOf(store, 'ada')).orders, 40)
          // The other process consumes the alias: bob's calls move into ada's profile with the marks
          // they had, which this process's fold of ada has already passed.
          await store.ingest([call(web, { type: 'alias', previousId: 'bob', userId: 'ada' }, now)])
          assert.equal(await drain(other), 1)
          await settle(store, now)
          assert.deepEqual(await profileOf(store, 'ada'), {
            orders: 80,
            spent: 80,
            skus: ['ada', 'bob'],
            last_sku: 'bob',
            recent_orders: 80,
            audiences: ['big_buyers'],
          })
        },
      )
    }
  })
}
