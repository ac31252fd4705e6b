/**
 * Privacy in the store contract, run against every backend like contract.ts: regulations, their
 * `delete` notifications, cancelled deliveries, erasure in batches, suppressions, statuses (settled by
 * the privacy module, privacy/regulation-settling.ts, over what the store reports of them).
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { ClaimedDelivery } from '../../src/domain/delivery-store.ts'
import type { WebhooksSettings } from '../../src/domain/destinations.ts'
import type { AcceptedMessage } from '../../src/domain/message-store.ts'
import type { Source } from '../../src/domain/sources.ts'
import { settleRegulations } from '../../src/privacy/regulation-settling.ts'
import type { Store } from '../../src/store/store.ts'
import { attempt, message, type StoreBackend } from './contract.ts'

const settings: WebhooksSettings = {
  webhooks: [{ url: 'https://h.example/hook', headers: {} }],
  sharedSecret: null,
}

/** A track call of `userId` (or an alias from `previousId`), as the Tracking API hands it over. */
function call(source: Source, messageId: string, userId: string, previousId?: string): AcceptedMessage {
  const type = previousId === undefined ? 'track' : 'alias'
  return message(source, messageId, {
    type,
    userId,
    previousId: previousId ?? null,
    payloadJson: JSON.stringify({ type, messageId, userId, ...(previousId ? { previousId } : {}) }),
  })
}

async function claimAll(store: Store, destinationId: string): Promise<ClaimedDelivery[]> {
  return store.claimDeliveries(destinationId, 1_000, Date.now(), 60_000)
}

async function eraseAll(store: Store, batch: number): Promise<number> {
  let steps = 0
  while ((await store.eraseNext(batch)) !== null) steps++
  return steps
}

export function privacyContract(backend: StoreBackend): void {
  const withStore = (name: string, body: (store: Store) => Promise<void>) =>
    test(name, async () => {
      const opened = await backend.open()
      try {
        await body(opened.store)
      } finally {
        await opened.cleanup()
      }
    })

  describe(`store privacy: ${backend.name}`, () => {
    withStore(
      "a deletion's notifications are never a call in profiles: the erased user's profile does not come back",
      async (store) => {
        const a = await store.createSource({ name: 'A', enabled: true })
        await store.createDestination({
          name: 'A',
          type: 'webhooks',
          enabled: true,
          sourceIds: [a.id],
          settings,
        })
        await store.ingest([call(a, 'a1', 'u1'), call(a, 'a2', 'u2')])
        const consumeAll = async () => {
          while ((await store.consumeIntoProfiles()) > 0);
        }
        await consumeAll()
        const u1 = await store.findProfile({ userId: 'u1' })
        assert.ok(u1)

        // The profile worker reads the delete before the erasure runs: no call is added for it.
        await store.createRegulation({ type: 'DELETE_ONLY', subjectIds: ['u1'], sourceIds: null })
        await consumeAll()
        const { events } = await store.listProfileEvents(u1.id, { limit: 10 })
        assert.deepEqual(
          events.map((event) => [event.type, event.messageId]),
          [['track', 'a1']],
        )
        await eraseAll(store, 100)
        assert.equal(await store.eraseProfilesOfDeletions(), 1)
        assert.equal(await store.findProfile({ userId: 'u1' }), null)

        // The profile worker reads the delete only after the erasure (it was behind): nothing comes back.
        await store.createRegulation({ type: 'DELETE_ONLY', subjectIds: ['u2'], sourceIds: null })
        await eraseAll(store, 100)
        assert.equal(await store.eraseProfilesOfDeletions(), 1)
        assert.equal(await store.findProfile({ userId: 'u2' }), null)
        await consumeAll()
        assert.equal(
          await store.findProfile({ userId: 'u2' }),
          null,
          "u2's profile came back from the delete",
        )
        assert.equal(await store.findProfile({ userId: 'u1' }), null)
      },
    )

    withStore(
      'a deletion: one delete per user per destination of affected sources, unsent deliveries cancelled, erasure in batches',
      async (store) => {
        const [a, b, c] = [
          await store.createSource({ name: 'A', enabled: true }),
          await store.createSource({ name: 'B', enabled: true }),
          await store.createSource({ name: 'C', enabled: true }),
        ]
        const create = (name: string, sourceIds: string[], enabled = true) =>
          store.createDestination({ name, type: 'webhooks', enabled, sourceIds, settings })
        const onlyA = await create('only A', [a.id])
        const aAndB = await create('A and B', [a.id, b.id])
        const onlyC = await create('only C', [c.id])
        const disabled = await create('disabled', [a.id], false)
        await store.ingest([
          call(a, 'a1', 'u1'),
          call(a, 'a2', 'u1'),
          call(b, 'b1', 'new-u1', 'u1'), // an alias from u1: B is affected through previousId
        ])
        // Later, so that the oldest due delivery claimed below is one of u1's.
        await new Promise((resolve) => setTimeout(resolve, 5))
        await store.ingest([call(a, 'a3', 'u2'), call(c, 'c1', 'u2')])
        // One of u1's deliveries is already delivered: it is not cancelled (it went out before).
        const [first] = await store.claimDeliveries(onlyA.id, 1, Date.now(), 60_000)
        assert.ok(first)
        await store.recordOutcomes([
          {
            deliveryId: first.id,
            attempts: [attempt()],
            status: 'delivered',
            deadLettered: false,
            nextAttemptAt: null,
            firstAttemptAt: Date.now(),
            closedUrls: [],
          },
        ])

        const regulation = await store.createRegulation({
          type: 'DELETE_ONLY',
          subjectIds: ['u1'],
          sourceIds: null,
        })
        assert.match(regulation.id, /^reg_[0-9a-f]{24}$/)
        assert.equal(regulation.status, 'INITIALIZED')
        assert.equal(regulation.regulationType, 'DELETE_ONLY')
        assert.deepEqual(regulation.subjectIds, ['u1'])
        assert.equal(regulation.sourceIds, null)
        assert.deepEqual(
          regulation.destinations.map((d) => [d.destinationId, d.status, d.delivered, d.failed]).sort(),
          [
            [aAndB.id, 'RUNNING', 0, 0],
            [onlyA.id, 'RUNNING', 0, 0],
          ].sort(),
        )

        // Exactly one delete each for the destinations of A and B (aAndB is connected to both: once);
        // u1's unsent deliveries are gone, u2's are still there.
        const toA = await claimAll(store, onlyA.id)
        const toAB = await claimAll(store, aAndB.id)
        const deletes = (list: ClaimedDelivery[]) => list.filter((d) => d.payload.type === 'delete')
        assert.equal(deletes(toA).length, 1)
        assert.equal(deletes(toAB).length, 1)
        assert.deepEqual(Object.keys(deletes(toA)[0]!.payload), ['type', 'userId', 'timestamp'])
        assert.deepEqual(deletes(toA)[0]!.payload, {
          type: 'delete',
          userId: 'u1',
          timestamp: new Date(regulation.createdAt).toISOString(),
        })
        assert.deepEqual(
          toA.filter((d) => d.payload.type !== 'delete').map((d) => d.payload.userId),
          ['u2'],
          "only u2's call is left to send to A's destination",
        )
        assert.deepEqual(
          toAB.filter((d) => d.payload.type !== 'delete').map((d) => d.payload.userId),
          ['u2'],
        )
        assert.equal((await claimAll(store, onlyC.id)).length, 1, "C's destination: u2's call, no delete")
        assert.equal(
          (await claimAll(store, disabled.id)).filter((d) => d.payload.type === 'delete').length,
          0,
        )

        // Erasure: every call of u1 (and the alias from u1) goes, in batches of 1; the deletes stay.
        assert.equal(await store.countMessages(a.id), 3 + 1)
        assert.equal(await eraseAll(store, 1), 4, 'three messages, then the batch that finds none left')
        for (const [source, id] of [
          [a, 'a1'],
          [a, 'a2'],
          [b, 'b1'],
        ] as const) {
          assert.equal(await store.getMessage(source.id, id), null, `${id} is erased`)
        }
        assert.ok(await store.getMessage(a.id, 'a3'), "u2's calls stay")
        assert.ok(await store.getMessage(c.id, 'c1'))
        // aAndB's delete is stored as a message of its first affected source by id: with onlyA's (in A)
        // when that is A, then one message carries both deliveries.
        const deleteMessages = a.id < b.id ? 1 : 2
        assert.equal(
          await store.countMessages(),
          2 + deleteMessages,
          "u2's two calls and the delete notifications",
        )
        assert.equal((await store.getRegulation(regulation.id))?.erased.messages, 3)

        // Statuses follow the notifications: one delivered, one dead-lettered → PARTIAL_SUCCESS.
        await settleRegulations(store, Date.now())
        assert.equal((await store.getRegulation(regulation.id))?.status, 'RUNNING')
        const now = Date.now()
        const settle = (claimed: ClaimedDelivery, delivered: boolean) => ({
          deliveryId: claimed.id,
          attempts: [attempt({ statusCode: delivered ? 200 : 503 })],
          status: delivered ? ('delivered' as const) : ('failed' as const),
          deadLettered: !delivered,
          nextAttemptAt: null,
          firstAttemptAt: now,
          closedUrls: [],
        })
        await store.recordOutcomes([settle(deletes(toA)[0]!, true), settle(deletes(toAB)[0]!, false)])
        assert.equal(await settleRegulations(store, Date.now()), 1)
        const finished = await store.getRegulation(regulation.id)
        assert.equal(finished?.status, 'PARTIAL_SUCCESS')
        assert.ok(finished?.finishedAt)
        assert.deepEqual(
          finished?.destinations.map((d) => [d.destinationId, d.status, d.delivered, d.failed]).sort(),
          [
            [aAndB.id, 'FAILED', 0, 1],
            [onlyA.id, 'FINISHED', 1, 0],
          ].sort(),
        )
        assert.equal(await settleRegulations(store, Date.now()), 0, 'a finished regulation stays finished')
      },
    )

    withStore('a deletion limited to some sources leaves the others alone', async (store) => {
      const a = await store.createSource({ name: 'A', enabled: true })
      const b = await store.createSource({ name: 'B', enabled: true })
      const toA = await store.createDestination({
        name: 'a',
        type: 'webhooks',
        enabled: true,
        sourceIds: [a.id],
        settings,
      })
      const toB = await store.createDestination({
        name: 'b',
        type: 'webhooks',
        enabled: true,
        sourceIds: [b.id],
        settings,
      })
      await store.ingest([call(a, 'a1', 'u1'), call(b, 'b1', 'u1')])
      const regulation = await store.createRegulation({
        type: 'DELETE_ONLY',
        subjectIds: ['u1', 'nobody'],
        sourceIds: [b.id],
      })
      assert.deepEqual(regulation.sourceIds, [b.id])
      assert.deepEqual(
        regulation.destinations.map((d) => d.destinationId),
        [toB.id],
      )
      assert.equal((await claimAll(store, toA.id)).length, 1, "A's call is still sent")
      assert.deepEqual(
        (await claimAll(store, toB.id)).map((d) => d.payload.type),
        ['delete'],
      )
      await eraseAll(store, 1_000)
      assert.equal(await store.countMessages(a.id), 1)
      assert.equal(await store.countMessages(b.id), 1, 'only the delete notification')
      const scopes = await store.recentErasures(0)
      assert.deepEqual(scopes, [
        {
          regulationId: regulation.id,
          userIds: ['u1', 'nobody'],
          sourceIds: [b.id],
          createdAt: regulation.createdAt,
        },
      ])
    })

    withStore(
      'a call received before a deletion and committed after it is accepted but never stored, routed or profiled',
      async (store) => {
        const a = await store.createSource({ name: 'A', enabled: true })
        const b = await store.createSource({ name: 'B', enabled: true })
        const toA = await store.createDestination({
          name: 'A',
          type: 'webhooks',
          enabled: true,
          sourceIds: [a.id, b.id],
          settings,
        })
        const regulation = await store.createRegulation({
          type: 'DELETE_ONLY',
          subjectIds: ['late', 'aliased'],
          sourceIds: [a.id],
        })
        await eraseAll(store, 100)
        // The commits of calls received a moment before the request, which its erasure scan missed.
        const before = regulation.createdAt - 1
        const outcome = await store.ingest([
          { ...call(a, 'late-1', 'late'), receivedAt: before },
          { ...call(a, 'keep-1', 'keeper'), receivedAt: before },
          { ...call(a, 'late-alias', 'new-id', 'aliased'), receivedAt: before },
          { ...call(b, 'other-source', 'late'), receivedAt: before },
          { ...call(a, 'at-creation', 'late'), receivedAt: regulation.createdAt },
          { ...call(a, 'after-1', 'late'), receivedAt: regulation.createdAt + 1 },
        ])
        assert.deepEqual(outcome.stored, [true, true, true, true, true, true], 'every call is acknowledged')
        const kept = async (source: Source, id: string) => (await store.getMessage(source.id, id)) !== null
        assert.deepEqual(
          [
            await kept(a, 'late-1'),
            await kept(a, 'keep-1'),
            await kept(a, 'late-alias'),
            await kept(b, 'other-source'),
            await kept(a, 'at-creation'),
            await kept(a, 'after-1'),
          ],
          [false, true, false, true, false, true],
          'what the request covers (its users, by userId or previousId, in its sources, received up to its creation) is not stored; the rest is',
        )
        assert.equal(outcome.deliveriesCreated, 3)
        assert.deepEqual(
          (await claimAll(store, toA.id))
            .filter((d) => d.payload.type === 'track' || d.payload.type === 'alias')
            .map((d) => d.payload.messageId)
            .sort(),
          ['after-1', 'keep-1', 'other-source'],
        )
        assert.equal((await store.getSourceStats(a.id)).accepted, 5, 'counted as accepted, not as duplicates')
        assert.equal((await store.getSourceStats(a.id)).duplicates, 0)
        while ((await store.consumeIntoProfiles()) > 0);
        const late = await store.findProfile({ userId: 'late' })
        assert.deepEqual(
          (await store.listProfileEvents(late!.id, { limit: 10 })).events.map((e) => e.messageId).sort(),
          ['after-1', 'other-source'],
          'the erased calls never reach a profile',
        )
        assert.equal(await store.findProfile({ userId: 'new-id' }), null)
      },
    )

    withStore('a deletion of users nobody has heard of finishes with nothing to send', async (store) => {
      await store.createSource({ name: 'A', enabled: true })
      const regulation = await store.createRegulation({
        type: 'DELETE_ONLY',
        subjectIds: ['ghost'],
        sourceIds: null,
      })
      assert.deepEqual(regulation.destinations, [])
      await eraseAll(store, 10)
      await settleRegulations(store, Date.now())
      const done = await store.getRegulation(regulation.id)
      assert.equal(done?.status, 'FINISHED')
      assert.equal(done?.erased.messages, 0)
      assert.deepEqual(
        (await store.listRegulations({ limit: 10, status: 'FINISHED' })).map((r) => r.id),
        [regulation.id],
      )
      assert.deepEqual(await store.listRegulations({ limit: 10, status: 'RUNNING' }), [])
    })

    withStore('suppressions: per source or everywhere, lifted by UNSUPPRESS', async (store) => {
      const a = await store.createSource({ name: 'A', enabled: true })
      const b = await store.createSource({ name: 'B', enabled: true })
      const empty = await store.privacyVersion()
      assert.equal(await store.privacyVersion(), empty, 'unchanged while nothing happens')
      const everywhere = await store.createRegulation({
        type: 'SUPPRESS_ONLY',
        subjectIds: ['u1'],
        sourceIds: null,
      })
      assert.equal(everywhere.status, 'FINISHED', 'a suppression is in force once recorded')
      const afterOne = await store.privacyVersion()
      assert.notEqual(afterOne, empty, 'a new regulation changes the version')
      const inA = await store.createRegulation({
        type: 'SUPPRESS_ONLY',
        subjectIds: ['u2'],
        sourceIds: [a.id, b.id],
      })
      const view = (list: Awaited<ReturnType<Store['listSuppressions']>>) =>
        list.map((s) => [s.userId, s.sourceId, s.regulationId])
      assert.deepEqual(
        view(await store.listSuppressions()),
        [
          ['u1', null, everywhere.id],
          ['u2', a.id, inA.id].sort() && ['u2', a.id, inA.id],
          ['u2', b.id, inA.id],
        ].sort((x, y) => String(x[0]! + x[1]).localeCompare(String(y[0]! + y[1]))),
      )
      // Lists are newest first: let the millisecond clock move on between requests.
      await new Promise((resolve) => setTimeout(resolve, 3))
      await store.createRegulation({ type: 'UNSUPPRESS', subjectIds: ['u2'], sourceIds: [a.id] })
      await store.createRegulation({ type: 'UNSUPPRESS', subjectIds: ['u1'], sourceIds: null })
      assert.deepEqual(view(await store.listSuppressions()), [['u2', b.id, inA.id]])
      assert.deepEqual(
        (await store.listRegulations({ limit: 2 })).map((r) => r.regulationType),
        ['UNSUPPRESS', 'UNSUPPRESS'],
      )
    })
  })
}
