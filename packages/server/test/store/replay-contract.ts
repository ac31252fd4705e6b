/**
 * Replays through the store contract, on every backend: one runner per replay (leases, also between
 * two handles standing for two processes), steps that commit only from their cursor and create one
 * delivery per call (skipping what the destination has, unless forced), claims that say which replay a
 * delivery is of, and cancellation that deletes what waits and leaves what is leased to its sender.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LeasedReplay, Replay, ReplayStep } from '../../src/domain/replays.ts'
import { message, type OpenedStore, outcome, type StoreBackend } from './contract.ts'

export function replayContract(backend: StoreBackend): void {
  const withStore = (name: string, body: (opened: OpenedStore) => Promise<void>) =>
    test(name, async () => {
      const opened = await backend.open()
      try {
        await body(opened)
      } finally {
        await opened.cleanup()
      }
    })

  /** A source with `count` stored calls, a destination connected to it (disabled while they arrived). */
  async function history({ store }: OpenedStore, count: number) {
    const source = await store.createSource({ name: 'History', enabled: true })
    const destination = await store.createDestination({
      name: 'Backfilled',
      type: 'webhooks',
      enabled: false,
      sourceIds: [source.id],
      settings: { webhooks: [{ url: 'https://example.com/hook', headers: {} }], sharedSecret: null },
    })
    const at = Date.now() - 60_000
    await store.ingest(
      Array.from({ length: count }, (_, i) =>
        message(source, `h-${i}`, { receivedAt: at + Math.floor(i / 2) }),
      ),
    )
    await store.updateDestination(destination.id, { enabled: true })
    const replay = await store.createReplay({
      destinationId: destination.id,
      sourceIds: [source.id],
      from: at,
      to: Date.now(),
      types: null,
      events: null,
      force: false,
    })
    return { source, destination, replay }
  }

  /** Another replay of `replay`'s destination, sources and window (not forced). */
  function sameWindowAgain({ store }: OpenedStore, replay: Replay): Promise<Replay> {
    const { destinationId, sourceIds, from, to } = replay
    return store.createReplay({ destinationId, sourceIds, from, to, types: null, events: null, force: false })
  }

  /** A step over every call the candidates read, all matched. */
  async function step(
    opened: OpenedStore,
    runner: string,
    leased: LeasedReplay,
    limit: number,
  ): Promise<ReplayStep> {
    const calls = await opened.store.replayCandidates(leased, leased.to, limit)
    const last = calls.at(-1)!
    return {
      replayId: leased.id,
      runner,
      from: leased.cursor,
      to: { receivedAt: last.receivedAt, pk: last.pk },
      scanDone: calls.length < limit,
      scanned: calls.length,
      matched: calls.map((call) => call.pk),
      leaseUntil: Date.now() + 10_000,
    }
  }

  describe(`store contract, replays: ${backend.name}`, () => {
    withStore('one runner holds a replay until its lease runs out, whichever handle asks', async (opened) => {
      const { replay } = await history(opened, 4)
      const other = await opened.second()
      const now = Date.now()
      const mine = await opened.store.leaseReplays('runner-a', now, now + 1_000)
      assert.deepEqual(
        mine.map((leased) => leased.id),
        [replay.id],
      )
      assert.deepEqual(await other.leaseReplays('runner-b', now + 10, now + 1_010), [])
      // Renewed by its holder; taken over once the lease ran out.
      assert.equal((await opened.store.leaseReplays('runner-a', now + 20, now + 1_020)).length, 1)
      const taken = await other.leaseReplays('runner-b', now + 1_030, now + 2_000)
      assert.deepEqual(
        taken.map((leased) => leased.id),
        [replay.id],
      )
      // The old holder's step is refused: nothing written.
      const stale = await step(opened, 'runner-a', mine[0]!, 10)
      assert.equal(await opened.store.commitReplayStep(stale), null)
      assert.equal((await opened.store.getReplay(replay.id))?.enqueued, 0)
    })

    withStore(
      'steps walk the window once in receive order; a step from a moved cursor writes nothing',
      async (opened) => {
        const { replay, destination } = await history(opened, 5)
        const [leased] = await opened.store.leaseReplays('runner', Date.now(), Date.now() + 10_000)
        const first = await step(opened, 'runner', leased!, 3)
        assert.deepEqual(await opened.store.commitReplayStep(first), { enqueued: 3, skipped: 0 })
        // The same step again (a runner that did not see its own commit): refused, no second delivery.
        assert.equal(await opened.store.commitReplayStep(first), null)
        const moved = { ...leased!, cursor: first.to }
        const rest = await step(opened, 'runner', moved, 3)
        assert.equal(rest.scanned, 2)
        assert.equal(rest.scanDone, true)
        assert.deepEqual(await opened.store.commitReplayStep(rest), { enqueued: 2, skipped: 0 })
        const shown = await opened.store.getReplay(replay.id)
        assert.deepEqual([shown?.scanned, shown?.matched, shown?.enqueued], [5, 5, 5])
        assert.equal(await opened.store.replayOutstanding(replay.id), 5)
        const claimed = await opened.store.claimDeliveries(destination.id, 10, Date.now(), 10_000)
        assert.equal(claimed.length, 5)
        assert.ok(claimed.every((delivery) => delivery.replayId === replay.id))
        assert.deepEqual(
          claimed.map((delivery) => delivery.payload.messageId),
          ['h-0', 'h-1', 'h-2', 'h-3', 'h-4'],
        )
      },
    )

    withStore('candidates stop before the time asked for, within the window', async (opened) => {
      const { replay } = await history(opened, 5) // received at from, from, from+1, from+1, from+2
      const [leased] = await opened.store.leaseReplays('runner', Date.now(), Date.now() + 10_000)
      const ids = async (before: number) =>
        (await opened.store.replayCandidates(leased!, before, 10)).map(
          (call) => (JSON.parse(call.payload) as { messageId: string }).messageId,
        )
      assert.deepEqual(await ids(replay.from), [])
      assert.deepEqual(await ids(replay.from + 1), ['h-0', 'h-1'])
      assert.deepEqual(await ids(replay.from + 2), ['h-0', 'h-1', 'h-2', 'h-3'])
      // A time past the window's end reads the whole window.
      assert.deepEqual(await ids(replay.to + 60_000), ['h-0', 'h-1', 'h-2', 'h-3', 'h-4'])
    })

    withStore('calls the destination has delivered or waiting are skipped unless forced', async (opened) => {
      const { destination, replay } = await history(opened, 3)
      const [leased] = await opened.store.leaseReplays('runner', Date.now(), Date.now() + 10_000)
      assert.deepEqual(await opened.store.commitReplayStep(await step(opened, 'runner', leased!, 10)), {
        enqueued: 3,
        skipped: 0,
      })
      const again = await sameWindowAgain(opened, replay)
      const forced = await opened.store.createReplay({ ...again, destinationId: destination.id, force: true })
      const leases = await opened.store.leaseReplays('runner', Date.now(), Date.now() + 10_000)
      const byId = new Map(leases.map((held) => [held.id, held]))
      assert.deepEqual(
        await opened.store.commitReplayStep(await step(opened, 'runner', byId.get(again.id)!, 10)),
        {
          enqueued: 0,
          skipped: 3,
        },
      )
      assert.deepEqual(
        await opened.store.commitReplayStep(await step(opened, 'runner', byId.get(forced.id)!, 10)),
        { enqueued: 3, skipped: 0 },
      )
    })

    withStore('replaying failed deliveries in bulk sends each call at most once', async (opened) => {
      const { store } = opened
      const { destination, replay } = await history(opened, 3)
      // Two deliveries of each call: a replay's, then a forced replay's.
      const twice = await store.createReplay({ ...replay, force: true })
      for (const held of await store.leaseReplays('runner', Date.now(), Date.now() + 10_000)) {
        assert.equal((await store.commitReplayStep(await step(opened, 'runner', held, 10)))?.enqueued, 3)
      }
      const claimed = await store.claimDeliveries(destination.id, 10, Date.now(), 30_000)
      const of = (replayId: string, messageId: string) =>
        claimed.find((d) => d.replayId === replayId && d.payload.messageId === messageId)!
      const failed = { status: 'failed' as const }
      await store.recordOutcomes([
        outcome(of(replay.id, 'h-0'), failed),
        outcome(of(replay.id, 'h-1'), failed),
        outcome(of(replay.id, 'h-2'), failed),
        outcome(of(twice.id, 'h-0')), // delivered by the second
        outcome(of(twice.id, 'h-1'), failed), // failed twice
      ])
      await store.releaseClaims([of(twice.id, 'h-2').id]) // still waiting
      const since = { destinationId: destination.id, status: 'failed' as const }
      assert.equal(await store.replayDeliveries(since, Date.now()), 1, 'h-1 once, by its newest delivery')
      const status = async (replayId: string, messageId: string) =>
        (await store.getDelivery(of(replayId, messageId).id))?.status
      assert.deepEqual([await status(replay.id, 'h-1'), await status(twice.id, 'h-1')], ['failed', 'pending'])
      assert.equal(await status(replay.id, 'h-0'), 'failed', 'delivered by another delivery')
      assert.equal(await status(replay.id, 'h-2'), 'failed', 'another delivery is waiting')
      // Delivered ones again: h-0, by the one delivery that delivered it.
      assert.equal(await store.replayDeliveries({ ...since, status: 'delivered' }, Date.now()), 1)
      assert.equal(await status(twice.id, 'h-0'), 'pending')
      // One delivery named by id is sent as asked.
      assert.equal(await store.replayDeliveries({ ids: [of(replay.id, 'h-0').id] }, Date.now()), 1)
    })

    withStore(
      'two replays of one window stepped at once by two handles: each call gets one delivery',
      async (opened) => {
        const calls = 405
        const { destination, replay } = await history(opened, calls)
        const again = await sameWindowAgain(opened, replay)
        const other = await opened.second()
        const leases = await opened.store.leaseReplays('runner', Date.now(), Date.now() + 60_000)
        assert.equal(leases.length, 2)
        // Each handle walks one replay in steps of 10, at the same time: the steps over the same calls overlap.
        const walk = async (handle: typeof opened.store, leased: LeasedReplay) => {
          let held = leased
          for (;;) {
            const next = await step({ ...opened, store: handle }, 'runner', held, 10)
            assert.notEqual(await handle.commitReplayStep(next), null)
            if (next.scanDone) return
            held = { ...held, cursor: next.to }
          }
        }
        const byId = new Map(leases.map((held) => [held.id, held]))
        await Promise.all([walk(opened.store, byId.get(replay.id)!), walk(other, byId.get(again.id)!)])
        assert.equal(await opened.store.countDeliveries({ destinationId: destination.id }), calls)
        const [first, second] = [await opened.store.getReplay(replay.id), await other.getReplay(again.id)]
        assert.equal(
          (first?.enqueued ?? 0) + (second?.enqueued ?? 0),
          calls,
          'one of the two enqueued each call',
        )
        assert.equal((first?.skipped ?? 0) + (second?.skipped ?? 0), calls, 'and the other skipped it')
      },
    )

    withStore('cancel deletes what waits, leaves what is leased, and stops the replay', async (opened) => {
      const { destination, replay } = await history(opened, 4)
      const [leased] = await opened.store.leaseReplays('runner', Date.now(), Date.now() + 10_000)
      await opened.store.commitReplayStep(await step(opened, 'runner', leased!, 10))
      const claimed = await opened.store.claimDeliveries(destination.id, 1, Date.now(), 10_000)
      assert.equal(claimed.length, 1)
      assert.deepEqual(await opened.store.stoppedReplays([replay.id]), [])
      assert.deepEqual(await opened.store.cancelReplay(destination.id, replay.id, Date.now()), { leased: 1 })
      assert.deepEqual(await opened.store.stoppedReplays([replay.id]), [replay.id])
      assert.equal((await opened.store.getReplay(replay.id))?.status, 'CANCELLED')
      assert.equal(
        await opened.store.claimDeliveries(destination.id, 10, Date.now(), 10_000).then((c) => c.length),
        0,
      )
      await opened.store.discardDeliveries(claimed.map((delivery) => delivery.id))
      assert.deepEqual(await opened.store.cancelReplay(destination.id, replay.id, Date.now()), { leased: 0 })
      assert.equal(await opened.store.countDeliveries({ destinationId: destination.id }), 0)
      // A cancelled replay's step writes nothing; another destination's id finds no replay.
      assert.equal(await opened.store.commitReplayStep(await step(opened, 'runner', leased!, 10)), null)
      assert.equal(await opened.store.cancelReplay('dst_other', replay.id, Date.now()), null)
    })
  })
}
