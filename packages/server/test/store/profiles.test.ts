// Profiles in the store, on every backend: consuming committed messages into profiles (links, alias
// merges and their chains, trait precedence), exactly once across handles, retention that waits for
// the profile worker, erasure, and the cursor's gap rule.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Source } from '../../src/domain/sources.ts'
import { advanceCursor, GAP_WATCH_MS } from '../../src/profile/profile-cursor.ts'
import type { Store } from '../../src/store/store.ts'
import { backends, call, drain, type Opened } from './profile-backends.ts'

async function eventCount(store: Store, profileId: string): Promise<number> {
  return (await store.listProfileEvents(profileId, { limit: 1000 })).events.length
}

for (const backend of backends) {
  describe(`profiles: ${backend.name}`, () => {
    const withStore = (name: string, body: (opened: Opened, source: Source) => Promise<void>) =>
      test(name, async () => {
        const opened = await backend.open()
        try {
          await body(opened, await opened.store.createSource({ name: 'web', enabled: true }))
        } finally {
          await opened.cleanup()
        }
      })

    withStore(
      'a call with userId and anonymousId links them; events and first/last seen follow',
      async ({ store }, web) => {
        await store.ingest([
          call(web, { anonymousId: 'a1', event: 'Viewed' }, 1_000),
          call(web, { type: 'identify', userId: 'u1', anonymousId: 'a1', traits: { plan: 'free' } }, 2_000),
          call(web, { userId: 'u1', event: 'Bought', properties: { total: 5 } }, 3_000),
        ])
        assert.equal(await drain(store), 3)
        const profile = await store.findProfile({ anonymousId: 'a1' })
        assert.ok(profile)
        assert.deepEqual(await store.findProfile({ userId: 'u1' }), profile)
        assert.deepEqual(profile.userIds, ['u1'])
        assert.deepEqual(profile.anonymousIds, ['a1'])
        assert.deepEqual(profile.traits, { plan: 'free' })
        assert.equal(profile.firstSeenAt, 1_000)
        assert.equal(profile.lastSeenAt, 3_000)
        const { events, next } = await store.listProfileEvents(profile.id, { limit: 2 })
        assert.deepEqual(
          events.map((event) => [event.type, event.event, event.timestamp]),
          [
            ['track', 'Bought', 3_000],
            ['identify', null, 2_000],
          ],
        )
        assert.deepEqual(events[0]!.properties, { total: 5 })
        assert.ok(next !== null)
        const older = await store.listProfileEvents(profile.id, { limit: 2, before: next })
        assert.deepEqual(
          older.events.map((event) => event.event),
          ['Viewed'],
        )
        assert.equal(older.next, null)
        assert.equal(await store.findProfile({ userId: 'nobody' }), null)
      },
    )

    withStore(
      'identify traits merge trait by trait; the later timestamp wins whatever the order',
      async ({ store }, web) => {
        await store.ingest([
          call(web, { type: 'identify', userId: 'u1', traits: { plan: 'pro', name: 'Ada' } }, 5_000),
          call(web, { type: 'identify', userId: 'u1', traits: { plan: 'free', city: 'Oslo' } }, 4_000),
        ])
        await drain(store)
        await store.ingest([call(web, { type: 'identify', userId: 'u1', traits: { name: 'Ada L.' } }, 6_000)])
        await drain(store)
        const profile = await store.findProfile({ userId: 'u1' })
        assert.deepEqual(profile?.traits, { plan: 'pro', name: 'Ada L.', city: 'Oslo' })
      },
    )

    withStore(
      'alias merges profiles and chains (A→B, then B→C): histories and ids join, old ids answer',
      async ({ store }, web) => {
        await store.ingest([
          call(web, { anonymousId: 'anon-A', event: 'Viewed' }, 1_000),
          call(web, { type: 'identify', anonymousId: 'anon-A', traits: { color: 'red' } }, 1_500),
          call(web, { userId: 'B', event: 'Viewed' }, 2_000),
          call(web, { userId: 'B', event: 'Viewed' }, 2_100),
        ])
        await drain(store)
        const profileA = (await store.findProfile({ anonymousId: 'anon-A' }))!
        const profileB = (await store.findProfile({ userId: 'B' }))!
        assert.notEqual(profileA.id, profileB.id)
        await store.ingest([call(web, { type: 'alias', previousId: 'anon-A', userId: 'B' }, 3_000)])
        await drain(store)
        const merged = (await store.findProfile({ userId: 'B' }))!
        assert.equal(merged.id, profileB.id)
        assert.deepEqual(merged.anonymousIds, ['anon-A'])
        assert.deepEqual(merged.traits, { color: 'red' })
        assert.equal(await eventCount(store, merged.id), 5)
        assert.equal((await store.getProfile(profileA.id))?.id, profileB.id)

        await store.ingest([
          call(web, { userId: 'C', event: 'Bought' }, 4_000),
          call(web, { type: 'alias', previousId: 'B', userId: 'C' }, 5_000),
        ])
        await drain(store)
        const final = (await store.findProfile({ userId: 'C' }))!
        assert.deepEqual(final.userIds, ['B', 'C'])
        assert.deepEqual(final.anonymousIds, ['anon-A'])
        assert.equal(await eventCount(store, final.id), 7)
        assert.equal(final.firstSeenAt, 1_000)
        for (const old of [profileA.id, profileB.id])
          assert.equal((await store.getProfile(old))?.id, final.id)
        assert.deepEqual(await store.findProfile({ anonymousId: 'anon-A' }), final)
      },
    )

    withStore(
      'within one batch: link, alias and chain resolve as they would one by one',
      async ({ store }, web) => {
        await store.ingest([
          call(web, { anonymousId: 'x', event: 'E' }),
          call(web, { userId: 'u', event: 'E' }),
          call(web, { userId: 'u', anonymousId: 'x', event: 'E' }),
          call(web, { type: 'alias', previousId: 'u', userId: 'v' }),
          call(web, { type: 'alias', previousId: 'v', userId: 'w' }),
          call(web, { type: 'alias', previousId: 'never-seen', userId: 'w' }),
        ])
        await drain(store)
        const profile = (await store.findProfile({ anonymousId: 'x' }))!
        assert.deepEqual(profile.userIds, ['u', 'v', 'w'])
        assert.deepEqual(profile.anonymousIds, ['never-seen', 'x'])
        assert.equal(await eventCount(store, profile.id), 6)
      },
    )

    withStore(
      'an anonymousId already tied to another userId (a shared device) does not merge two users',
      async ({ store }, web) => {
        await store.ingest([call(web, { userId: 'alice', anonymousId: 'device' })])
        await drain(store)
        await store.ingest([call(web, { userId: 'bob', anonymousId: 'device' })])
        await drain(store)
        const alice = (await store.findProfile({ userId: 'alice' }))!
        const bob = (await store.findProfile({ userId: 'bob' }))!
        assert.notEqual(alice.id, bob.id)
        assert.deepEqual(alice.anonymousIds, ['device'])
        assert.deepEqual(bob.anonymousIds, [])
        assert.equal(await eventCount(store, bob.id), 1)
      },
    )

    withStore(
      'calls with neither userId nor anonymousId make no profile but are consumed',
      async ({ store }, web) => {
        await store.ingest([call(web, { event: 'Orphan' })])
        assert.equal(await drain(store), 1)
        assert.equal(await store.consumeIntoProfiles(), 0)
      },
    )

    withStore(
      'two handles consuming at once consume every message exactly once',
      async ({ store, second }, web) => {
        const other = await second()
        const calls = Array.from({ length: 300 }, (_, i) =>
          call(web, { userId: `user-${i % 7}`, event: 'E' }),
        )
        await store.ingest(calls)
        const consumers = [store, other, store, other].map(async (handle) => {
          let total = 0
          for (let round = 0; round < 100; round++) total += await handle.consumeIntoProfiles(40)
          return total
        })
        const consumed = (await Promise.all(consumers)).reduce((sum, n) => sum + n, 0)
        assert.equal(consumed, 300)
        let events = 0
        for (let i = 0; i < 7; i++)
          events += await eventCount(store, (await store.findProfile({ userId: `user-${i}` }))!.id)
        assert.equal(events, 300)
      },
    )

    withStore('retention never deletes a message profiles have not consumed', async ({ store }, web) => {
      await store.ingest([call(web, { userId: 'u', event: 'E' }), call(web, { userId: 'u', event: 'F' })])
      await store.consumeIntoProfiles(1)
      assert.equal((await store.sweep(Date.now() + 60_000)).messages, 1)
      assert.equal(await store.countMessages(), 1)
      await drain(store)
      assert.equal((await store.sweep(Date.now() + 60_000)).messages, 1)
      // The profile keeps its own copy of the calls.
      assert.equal(await eventCount(store, (await store.findProfile({ userId: 'u' }))!.id), 2)
    })

    withStore(
      'erasing users removes their profiles, ids and calls; a source filter narrows it',
      async ({ store }, web) => {
        const app = await store.createSource({ name: 'app', enabled: true })
        await store.ingest([
          call(web, { userId: 'gone', anonymousId: 'gone-device', event: 'E' }),
          call(web, { userId: 'kept', event: 'E' }),
          call(app, { userId: 'app-only', event: 'E' }),
        ])
        await drain(store)
        const gone = (await store.findProfile({ userId: 'gone' }))!
        assert.equal(await store.eraseProfilesOfUsers(['app-only', 'gone'], [web.id]), 1)
        assert.equal(await store.getProfile(gone.id), null)
        assert.equal(await store.findProfile({ anonymousId: 'gone-device' }), null)
        assert.equal(await eventCount(store, gone.id), 0)
        assert.ok(await store.findProfile({ userId: 'app-only' }))
        assert.equal(await store.eraseProfilesOfUsers(['app-only']), 1)
        assert.equal(await store.findProfile({ userId: 'app-only' }), null)
        assert.ok(await store.findProfile({ userId: 'kept' }))
        assert.equal(await store.eraseProfilesOfUsers([]), 0)
        // Consuming goes on after an erasure.
        await store.ingest([call(web, { userId: 'kept', event: 'E' })])
        assert.equal(await drain(store), 1)
      },
    )

    // Calls just stored may reach the worker without being read back (SQLite's ingest hands them over):
    // what it consumes must still be exactly what the log holds when it gets there.
    withStore(
      'the worker consumes what the log holds: no call deleted after its commit, and calls another writer stored in between',
      async ({ store, beside }, web) => {
        await store.ingest([call(web, { userId: 'first', event: 'E' })])
        assert.equal(await drain(store), 1)
        const doomed = call(web, { userId: 'deleted', event: 'E' })
        await store.ingest([
          call(web, { userId: 'before', event: 'E' }),
          doomed,
          call(web, { userId: 'after', event: 'E' }),
        ])
        assert.equal(await beside(`DELETE FROM messages WHERE message_id = '${doomed.messageId}'`), 1)
        assert.equal(await drain(store), 2)
        assert.equal(await store.findProfile({ userId: 'deleted' }), null)
        assert.ok(await store.findProfile({ userId: 'before' }))
        assert.ok(await store.findProfile({ userId: 'after' }))

        await store.ingest([call(web, { userId: 'ingested-1', event: 'E' })])
        const payload = JSON.stringify({ type: 'track', messageId: 'beside-1', userId: 'beside', event: 'E' })
        assert.equal(
          await beside(
            `INSERT INTO messages (source_id, message_id, type, received_at, payload) VALUES ('${web.id}', 'beside-1', 'track', ${Date.now()}, '${payload}')`,
          ),
          1,
        )
        await store.ingest([
          call(web, { type: 'identify', userId: 'ingested-2', traits: { plan: 'pro' } }),
          call(web, { userId: 'ingested-2', event: 'Bought', properties: { total: 5 } }),
        ])
        assert.equal(await drain(store), 4)
        assert.ok(await store.findProfile({ userId: 'ingested-1' }))
        assert.ok(await store.findProfile({ userId: 'beside' }))
        const profile = (await store.findProfile({ userId: 'ingested-2' }))!
        assert.deepEqual(profile.traits, { plan: 'pro' })
        const { events } = await store.listProfileEvents(profile.id, { limit: 10 })
        assert.deepEqual(
          events.map((event) => [event.type, event.event, event.properties]),
          [
            ['track', 'Bought', { total: 5 }],
            ['identify', null, { plan: 'pro' }],
          ],
        )
      },
    )
  })
}

describe('profile cursor', () => {
  test('empty pk ranges become gaps, are filled when their pks commit late, and expire', () => {
    const now = 1_000_000
    const first = advanceCursor(0, [], [], [1, 2, 5, 6, 9], now)
    assert.deepEqual(first, {
      highPk: 9,
      gaps: [
        [3, 4, now],
        [7, 8, now],
      ],
    })
    const second = advanceCursor(first.highPk, first.gaps, [4, 7], [10], now + 10)
    assert.deepEqual(second, {
      highPk: 10,
      gaps: [
        [3, 3, now],
        [8, 8, now],
      ],
    })
    assert.deepEqual(advanceCursor(10, second.gaps, [], [], now + GAP_WATCH_MS + 1), { highPk: 10, gaps: [] })
  })
})
