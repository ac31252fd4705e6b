/**
 * The batches of a batching destination through the store contract, on every backend: formed from
 * due deliveries (each delivery in one batch at most, even with two handles forming at once), leased,
 * recorded onto every member, and replayed as a unit.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { BatchOutcome, ClaimedBatch } from '../../src/domain/delivery-store.ts'
import { attempt, message, type OpenedStore, outcome, type StoreBackend } from './contract.ts'

const BATCHING = { maxEvents: 10, maxBytes: 512_000, maxWaitMs: 0 }

function batchOutcome(batch: ClaimedBatch, overrides: Partial<BatchOutcome> = {}): BatchOutcome {
  const now = Date.now()
  return {
    batchId: batch.id,
    attempts: [attempt({ attemptedAt: now })],
    status: 'delivered',
    deadLettered: false,
    nextAttemptAt: null,
    firstAttemptAt: batch.firstAttemptAt ?? now,
    closedUrls: [],
    ...overrides,
  }
}

export function batchContract(backend: StoreBackend): void {
  const withStore = (name: string, body: (opened: OpenedStore) => Promise<void>) =>
    test(name, async () => {
      const opened = await backend.open()
      try {
        await body(opened)
      } finally {
        await opened.cleanup()
      }
    })

  async function batchingBacklog({ store }: OpenedStore, count: number) {
    const source = await store.createSource({ name: 'Batches', enabled: true })
    const destination = await store.createDestination({
      name: 'Batched hooks',
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: {
        webhooks: [{ url: 'https://example.com/hook', headers: {} }],
        sharedSecret: null,
        batching: BATCHING,
      },
    })
    await store.ingest(Array.from({ length: count }, (_, i) => message(source, `b-${i}`)))
    return { source, destination }
  }

  describe(`store contract, batches: ${backend.name}`, () => {
    withStore('batching settings are stored and read back', async (opened) => {
      const { destination } = await batchingBacklog(opened, 0)
      assert.deepEqual((await opened.store.getDestination(destination.id))?.settings.batching, BATCHING)
    })

    withStore(
      'two handles forming batches at once put each delivery in one batch at most',
      async (opened) => {
        const { store } = opened
        const { destination } = await batchingBacklog(opened, 40)
        const other = await opened.second()
        const now = Date.now() + 1
        const [mine, theirs] = await Promise.all([
          store.batchCandidates(destination.id, 100, now),
          other.batchCandidates(destination.id, 100, now),
        ])
        assert.equal(mine.length, 40)
        const groups = (ids: number[]) => [ids.slice(0, 20), ids.slice(20)]
        await Promise.all([
          store.formBatches(destination.id, groups(mine.map((c) => c.id)), now),
          other.formBatches(destination.id, groups(theirs.map((c) => c.id).reverse()), now),
        ])
        assert.deepEqual(
          await store.batchCandidates(destination.id, 100, now),
          [],
          'every delivery is in a batch',
        )
        // Batched deliveries are never claimed one by one.
        assert.deepEqual(await store.claimDeliveries(destination.id, 100, now, 30_000), [])
        assert.equal(await store.nextDueAt(destination.id, now), null)

        const claimed = await store.claimBatches(destination.id, 100, now, 30_000)
        const members = claimed.flatMap((batch) => batch.members.map((member) => member.id))
        assert.equal(members.length, 40)
        assert.equal(new Set(members).size, 40, 'no delivery in two batches')
        assert.deepEqual(await other.claimBatches(destination.id, 100, now, 30_000), [], 'leased')
        // A lease that ran out (its process died) makes the batch claimable again.
        const later = now + 30_001
        assert.equal((await other.claimBatches(destination.id, 100, later, 30_000)).length, claimed.length)
      },
    )

    withStore(
      'a batch formed and claimed at once is leased to its former, with the deliveries that joined it',
      async (opened) => {
        const { store } = opened
        const { destination } = await batchingBacklog(opened, 6)
        const other = await opened.second()
        const now = Date.now() + 1
        const candidates = await store.batchCandidates(destination.id, 10, now)
        assert.deepEqual(
          candidates.map((c) => [c.payload.messageId, c.destinationId, c.attemptCount, c.replayId]),
          Array.from({ length: 6 }, (_, i) => [`b-${i}`, destination.id, 0, null]),
        )
        const ids = candidates.map((c) => c.id)
        // Another handle batched two of them first: they join no second batch.
        assert.equal(await other.formBatches(destination.id, [ids.slice(0, 2)], now), 1)
        const formed = await store.formClaimedBatches(
          destination.id,
          [ids.slice(0, 2), [ids[4]!, ids[2]!, ids[3]!], [ids[5]!]],
          now,
          30_000,
        )
        assert.deepEqual(
          formed.map((batch) => batch.memberIds),
          [[ids[2], ids[3], ids[4]], [ids[5]]],
          'in id order; a batch none joined is not kept',
        )
        // Leased: no one claims them until the lease runs out; the other handle's batch is free.
        const claimable = await other.claimBatches(destination.id, 10, now, 30_000)
        assert.deepEqual(
          claimable.map((batch) => batch.members.map((member) => member.id)),
          [ids.slice(0, 2)],
        )
        // Once every lease ran out, the formed batches come back as formed (with the other one).
        const later = now + 30_001
        const expired = await other.claimBatches(destination.id, 10, later, 30_000)
        assert.deepEqual(
          expired.map((batch) => [batch.id, batch.members.map((member) => member.id)]),
          [[claimable[0]!.id, ids.slice(0, 2)], ...formed.map((batch) => [batch.id, batch.memberIds])],
        )
        assert.deepEqual(await store.batchCandidates(destination.id, 10, later), [])
      },
    )

    withStore(
      "deliveryBacklog counts a batch's members while it is open, and no longer once delivered",
      async (opened) => {
        const { store } = opened
        const { destination } = await batchingBacklog(opened, 5)
        const now = Date.now() + 1
        const ids = (await store.batchCandidates(destination.id, 10, now)).map((c) => c.id)
        const [batch] = await store.formClaimedBatches(destination.id, [ids.slice(0, 3)], now, 30_000)
        assert.ok(batch)
        const [waiting] = await store.deliveryBacklog()
        assert.equal(waiting?.destinationId, destination.id)
        assert.equal(waiting?.pending, 5, 'three in a batch in flight, two in none')
        assert.ok(waiting?.oldestDueAt != null && waiting.oldestDueAt <= now)
        assert.deepEqual(
          await store.batchCandidates(destination.id, 10, now).then((c) => c.map((d) => d.id)),
          ids.slice(3),
        )
        await store.recordBatchOutcomes([
          batchOutcome({ id: batch.id, firstAttemptAt: null } as ClaimedBatch),
        ])
        assert.equal((await store.deliveryBacklog())[0]?.pending, 2)
      },
    )

    withStore(
      'a bulk replay leaves out a failed batch holding a call delivered since; by id it goes whole',
      async (opened) => {
        const { store } = opened
        const { source, destination } = await batchingBacklog(opened, 3)
        const now = Date.now() + 1
        const candidates = await store.batchCandidates(destination.id, 10, now)
        await store.formBatches(destination.id, [candidates.map((c) => c.id)], now)
        const [batch] = await store.claimBatches(destination.id, 10, now, 30_000)
        await store.recordBatchOutcomes([batchOutcome(batch!, { status: 'failed' })])
        // b-0 sent again by a forced replay, and delivered.
        const replay = await store.createReplay({
          destinationId: destination.id,
          sourceIds: [source.id],
          from: 0,
          to: Date.now() + 60_000,
          types: null,
          events: null,
          force: true,
        })
        const [leased] = await store.leaseReplays('runner', Date.now(), Date.now() + 10_000)
        const calls = await store.replayCandidates(leased!, Date.now(), 10)
        const first = calls.find((call) => JSON.parse(call.payload).messageId === 'b-0')!
        const stepped = await store.commitReplayStep({
          replayId: replay.id,
          runner: 'runner',
          from: leased!.cursor,
          to: { receivedAt: calls.at(-1)!.receivedAt, pk: calls.at(-1)!.pk },
          scanDone: true,
          scanned: calls.length,
          matched: [first.pk],
          leaseUntil: Date.now() + 10_000,
        })
        assert.equal(stepped?.enqueued, 1)
        const [again] = await store.claimDeliveries(destination.id, 10, Date.now() + 2, 30_000)
        assert.equal(again?.payload.messageId, 'b-0')
        await store.recordOutcomes([outcome(again!)])

        const failed = { destinationId: destination.id, status: 'failed' as const }
        assert.equal(await store.replayDeliveries(failed, Date.now() + 3), 0, 'b-0 would go twice')
        assert.equal(await store.countDeliveries({ destinationId: destination.id, status: 'failed' }), 3)
        assert.equal(await store.replayDeliveries({ ids: [batch!.members[1]!.id] }, Date.now() + 3), 3)
      },
    )

    withStore(
      'an outcome is recorded on the batch and every member; a replay of one member replays the batch',
      async (opened) => {
        const { store } = opened
        const { destination } = await batchingBacklog(opened, 3)
        const now = Date.now() + 1
        const candidates = await store.batchCandidates(destination.id, 10, now)
        assert.equal(await store.formBatches(destination.id, [candidates.map((c) => c.id)], now), 1)
        assert.equal(await store.nextBatchDueAt(destination.id, now), now)
        assert.deepEqual(await store.destinationsWithOpenBatches(), [destination.id])
        const [batch] = await store.claimBatches(destination.id, 10, now, 30_000)
        assert.ok(batch)
        assert.deepEqual(
          batch.members.map((member) => member.payload.messageId),
          ['b-0', 'b-1', 'b-2'],
        )
        await store.recordBatchOutcomes([
          batchOutcome(batch, {
            status: 'failed',
            deadLettered: true,
            attempts: [attempt({ statusCode: 503, errorKind: 'http' })],
          }),
        ])
        const listed = await store.listDeliveries(destination.id, { limit: 10 })
        assert.equal(listed.length, 3)
        for (const delivery of listed) {
          assert.equal(delivery.batchId, batch.id)
          assert.equal(delivery.status, 'failed')
          assert.equal(delivery.deadLettered, true)
          assert.equal(delivery.attemptCount, 1)
          assert.deepEqual(
            delivery.attempts.map((a) => a.statusCode),
            [503],
          )
        }
        assert.deepEqual(await store.destinationsWithOpenBatches(), [])
        assert.equal((await store.deliveryStats(destination.id)).deadLettered, 3)

        assert.equal(await store.replayDeliveries({ ids: [listed[0]!.id] }, now + 10), 3, 'the whole batch')
        for (const delivery of await store.listDeliveries(destination.id, { limit: 10 })) {
          assert.equal(delivery.status, 'pending')
          assert.equal(delivery.deadLettered, false)
        }
        const [again] = await store.claimBatches(destination.id, 10, now + 10, 30_000)
        assert.equal(again?.id, batch.id)
        assert.equal(again?.members.length, 3)
        assert.equal(again?.firstAttemptAt, null, 'a fresh retry window')
        await store.recordBatchOutcomes([batchOutcome(again!)])
        assert.equal(
          await store.replayDeliveries({ destinationId: destination.id, status: 'delivered' }, now + 20),
          3,
        )
        assert.equal(await store.countDeliveries({ destinationId: destination.id, status: 'pending' }), 3)
      },
    )
  })
}
