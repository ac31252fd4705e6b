/**
 * The store contract as behaviour: the SAME tests run against every backend (sqlite.test.ts: in-thread
 * and on its worker thread; postgres.test.ts). Each test gets a fresh, migrated, empty store with the
 * default options; `second()` opens another handle on the same data (another connection pool /
 * database connection), standing in for another process.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { DeliveryAttempt } from '../../src/domain/deliveries.ts'
import type { ClaimedDelivery, DeliveryOutcome } from '../../src/domain/delivery-store.ts'
import type { Destination, WebhooksSettings } from '../../src/domain/destinations.ts'
import type { AcceptedMessage } from '../../src/domain/message-store.ts'
import type { Source } from '../../src/domain/sources.ts'
import { sampledIn } from '../../src/route/filters.ts'
import type { Store, StoreEvent } from '../../src/store/store.ts'

/** Store options a test may set (every backend takes them). */
export interface TestStoreOptions {
  dedupeWindowMs?: number
}

export interface OpenedStore {
  store: Store
  /** Another handle on the same data. */
  second(options?: TestStoreOptions): Promise<Store>
  /** Closes every handle and removes the data. */
  cleanup(): Promise<void>
}

export interface StoreBackend {
  name: string
  open(): Promise<OpenedStore>
}

const HOUR = 3_600_000
/** Lets the millisecond clock move on (creation times order lists). */
const tick = () => new Promise((resolve) => setTimeout(resolve, 3))
/** Lets announcements already on their way arrive (PostgreSQL hears its own NOTIFYs too). */
const settle = (ms = 50) => new Promise((resolve) => setTimeout(resolve, ms))
const DAY = 24 * HOUR

export function message(
  source: Source,
  messageId: string,
  overrides: Partial<AcceptedMessage> = {},
): AcceptedMessage {
  const receivedAt = overrides.receivedAt ?? Date.now()
  return {
    sourceId: source.id,
    messageId,
    type: 'track',
    receivedAt,
    routeTo: ['webhooks'],
    // Key order and spacing kept deliberately unusual: the payload must come back exactly as given.
    payloadJson: `{"type":"track","messageId":${JSON.stringify(messageId)},"zeta":1,"alpha":{"b":[1,2.5,"x"],"a":null},"unicode":"é✓\\u0000"}`,
    ...overrides,
  }
}

export function attempt(overrides: Partial<DeliveryAttempt> = {}): DeliveryAttempt {
  return {
    attemptedAt: Date.now(),
    url: 'https://example.com/hook',
    statusCode: 200,
    errorKind: null,
    errorText: null,
    latencyMs: 12,
    responseExcerpt: 'ok',
    ...overrides,
  }
}

export function outcome(claimed: ClaimedDelivery, overrides: Partial<DeliveryOutcome> = {}): DeliveryOutcome {
  const now = Date.now()
  return {
    deliveryId: claimed.id,
    attempts: [attempt({ attemptedAt: now })],
    status: 'delivered',
    deadLettered: false,
    nextAttemptAt: null,
    firstAttemptAt: claimed.firstAttemptAt ?? now,
    closedUrls: [],
    ...overrides,
  }
}

async function webhooks(store: Store, sources: Source[], overrides: Partial<Destination> = {}) {
  return store.createDestination({
    name: overrides.name ?? 'Hooks',
    type: 'webhooks',
    enabled: overrides.enabled ?? true,
    sourceIds: sources.map((s) => s.id),
    settings: overrides.settings ?? {
      webhooks: [{ url: 'https://example.com/hook', headers: { 'x-team': 'a' } }],
      sharedSecret: 's3cret',
    },
  })
}

/** A source, a destination connected to it, and `count` ingested messages (one delivery each). */
async function backlog(store: Store, count: number, prefix = 'm') {
  const source = await store.createSource({ name: 'Backlog', enabled: true })
  const destination = await webhooks(store, [source])
  const messages = Array.from({ length: count }, (_, i) => message(source, `${prefix}-${i}`))
  const result = await store.ingest(messages)
  assert.equal(result.deliveriesCreated, count)
  return { source, destination }
}

export function storeContract(backend: StoreBackend): void {
  /** Runs `body` on a fresh store and always cleans up. */
  const withStore = (name: string, body: (opened: OpenedStore) => Promise<void>) =>
    test(name, async () => {
      const opened = await backend.open()
      try {
        await body(opened)
      } finally {
        await opened.cleanup()
      }
    })

  describe(`store contract: ${backend.name}`, () => {
    withStore('migrate is idempotent; ping answers', async ({ store }) => {
      await store.migrate()
      await store.migrate()
      assert.equal(await store.ping(), true)
      assert.equal(await store.countMessages(), 0)
    })

    withStore('ended sessions: recorded once, kept until their expiry, then forgotten', async ({ store }) => {
      const now = Date.now()
      assert.equal(await store.isSessionEnded('a'), false)
      await store.endSession('a', now + 60_000)
      await store.endSession('a', now + 60_000)
      await store.endSession('old', now - 1)
      assert.equal(await store.isSessionEnded('a'), true)
      // Expired by the next sign-out: no longer kept (its cookie is refused for its expiry anyway).
      await store.endSession('b', now + 60_000)
      assert.equal(await store.isSessionEnded('old'), false)
      assert.equal(await store.isSessionEnded('b'), true)
    })

    withStore(
      'sources: create, list, get, by write key, rename, disable, rotate, delete',
      async ({ store }) => {
        const a = await store.createSource({ name: 'App', enabled: true })
        await tick() // lists are in creation order
        const b = await store.createSource({ name: 'Web', enabled: false })
        assert.match(a.id, /^src_[0-9a-f]{24}$/)
        assert.notEqual(a.writeKey, b.writeKey)
        assert.equal(b.enabled, false)
        assert.deepEqual(
          (await store.listSources()).map((s) => s.id),
          [a.id, b.id],
        )
        assert.deepEqual(await store.getSource(a.id), a)
        assert.deepEqual(await store.getSourceByWriteKey(a.writeKey), a)
        assert.equal(await store.getSource('src_missing'), null)
        assert.equal(await store.getSourceByWriteKey('nope'), null)

        const renamed = await store.updateSource(a.id, { name: 'App 2', enabled: false })
        assert.deepEqual(renamed, { ...a, name: 'App 2', enabled: false })
        assert.deepEqual(await store.getSource(a.id), renamed)

        const rotated = await store.updateSource(a.id, { rotateWriteKey: true })
        assert.ok(rotated)
        assert.notEqual(rotated.writeKey, a.writeKey)
        assert.equal(rotated.name, 'App 2')
        assert.equal(await store.getSourceByWriteKey(a.writeKey), null, 'the old key stops working at once')
        assert.equal((await store.getSourceByWriteKey(rotated.writeKey))?.id, a.id)
        assert.equal(await store.updateSource('src_missing', { name: 'x' }), null)

        assert.equal(await store.deleteSource(b.id), true)
        assert.equal(await store.deleteSource(b.id), false)
        assert.deepEqual(
          (await store.listSources()).map((s) => s.id),
          [a.id],
        )
      },
    )

    withStore('source stats count accepted, duplicates and rejected', async ({ store }) => {
      const source = await store.createSource({ name: 'S', enabled: true })
      const other = await store.createSource({ name: 'O', enabled: true })
      assert.deepEqual(await store.getSourceStats(source.id), {
        accepted: 0,
        duplicates: 0,
        rejected: 0,
        suppressed: 0,
      })
      await store.ingest([
        message(source, 'a'),
        message(source, 'b'),
        message(source, 'a'),
        message(other, 'a'),
      ])
      await store.ingest([message(source, 'b'), message(source, 'c')])
      await store.countRejected(source.id, 3)
      await store.countRejected(source.id, 2)
      await store.countSuppressed(source.id, 4)
      assert.deepEqual(await store.getSourceStats(source.id), {
        accepted: 3,
        duplicates: 2,
        rejected: 5,
        suppressed: 4,
      })
      assert.deepEqual(await store.getSourceStats(other.id), {
        accepted: 1,
        duplicates: 0,
        rejected: 0,
        suppressed: 0,
      })
      assert.deepEqual(await store.getSourceStats('src_missing'), {
        accepted: 0,
        duplicates: 0,
        rejected: 0,
        suppressed: 0,
      })
    })

    withStore('destinations: create with connections, list, get, update, delete', async ({ store }) => {
      const a = await store.createSource({ name: 'A', enabled: true })
      const b = await store.createSource({ name: 'B', enabled: true })
      const settings: WebhooksSettings = {
        webhooks: [
          { url: 'https://one.example/hook', headers: { Authorization: 'Bearer x' } },
          { url: 'https://two.example/hook', headers: {} },
        ],
        sharedSecret: null,
      }
      const created = await store.createDestination({
        name: 'Hooks',
        type: 'webhooks',
        enabled: true,
        sourceIds: [b.id, a.id],
        settings,
      })
      assert.match(created.id, /^dst_[0-9a-f]{24}$/)
      assert.equal(created.name, 'Hooks')
      assert.equal(created.type, 'webhooks')
      assert.deepEqual(created.settings, settings)
      assert.deepEqual(created.sourceIds, [a.id, b.id].sort())
      assert.equal(created.createdAt, created.updatedAt)
      assert.deepEqual(await store.getDestination(created.id), created)
      await tick()
      const second = await webhooks(store, [a], { name: 'Second' })
      assert.deepEqual(
        (await store.listDestinations()).map((d) => [d.id, d.sourceIds]),
        [
          [created.id, [a.id, b.id].sort()],
          [second.id, [a.id]],
        ],
      )

      await tick()
      const updated = await store.updateDestination(created.id, { enabled: false, sourceIds: [a.id] })
      assert.ok(updated)
      assert.equal(updated.enabled, false)
      assert.equal(updated.name, 'Hooks')
      assert.deepEqual(updated.settings, settings)
      assert.deepEqual(updated.sourceIds, [a.id])
      assert.ok(updated.updatedAt > created.updatedAt)
      const renamed = await store.updateDestination(created.id, {
        name: 'Renamed',
        settings: { webhooks: [{ url: 'https://three.example/', headers: {} }], sharedSecret: 'k' },
      })
      assert.equal(renamed?.name, 'Renamed')
      assert.deepEqual(renamed?.sourceIds, [a.id], 'connections kept when not in the patch')
      assert.equal(renamed?.settings.sharedSecret, 'k')
      assert.equal(await store.updateDestination('dst_missing', { name: 'x' }), null)

      await store.deleteSource(a.id)
      assert.deepEqual(
        (await store.getDestination(second.id))?.sourceIds,
        [],
        'a deleted source is disconnected',
      )
      assert.equal(await store.deleteDestination(created.id), true)
      assert.equal(await store.deleteDestination(created.id), false)
      assert.equal(await store.getDestination(created.id), null)
      assert.deepEqual(
        (await store.listDestinations()).map((d) => d.id),
        [second.id],
      )
    })

    withStore('ingest stores exact payloads and drops repeats inside the window', async ({ store }) => {
      const source = await store.createSource({ name: 'S', enabled: true })
      const other = await store.createSource({ name: 'O', enabled: true })
      const first = await store.ingest([
        message(source, 'one'),
        message(source, 'two'),
        message(source, 'one'), // repeat in the same batch
        message(other, 'one'), // same id, other source: not a duplicate
      ])
      assert.deepEqual(first.stored, [true, true, false, true])
      const second = await store.ingest([message(source, 'two'), message(source, 'three')])
      assert.deepEqual(second.stored, [false, true])
      assert.equal(await store.countMessages(source.id), 3)
      assert.equal(await store.countMessages(other.id), 1)
      assert.equal(await store.countMessages(), 4)

      const stored = await store.getMessage(source.id, 'one')
      assert.ok(stored)
      assert.equal(stored.sourceId, source.id)
      assert.equal(stored.messageId, 'one')
      assert.equal(stored.type, 'track')
      assert.deepEqual(stored.payload, JSON.parse(message(source, 'one').payloadJson))
      assert.deepEqual(Object.keys(stored.payload), ['type', 'messageId', 'zeta', 'alpha', 'unicode'])
      assert.equal(await store.getMessage(source.id, 'missing'), null)
      assert.deepEqual(await store.ingest([]), { stored: [], deliveriesCreated: 0 })
    })

    withStore(
      'ids and payloads in any script (astral, combining, commas) round-trip exactly',
      async ({ store }) => {
        const source = await store.createSource({ name: 'S', enabled: true })
        const at = Date.now() - 1_000
        const ids = ['😀-emoji', 'a,b,c', 'e\u0301-combining', '日本語', 'plain']
        const result = await store.ingest(
          ids.map((id, i) =>
            message(source, id, {
              type: i % 2 === 0 ? 'identify' : 'track',
              receivedAt: at + i,
            }),
          ),
        )
        assert.deepEqual(result.stored, [true, true, true, true, true])
        for (const [i, id] of ids.entries()) {
          const stored = await store.getMessage(source.id, id)
          assert.ok(stored, id)
          assert.equal(stored.messageId, id)
          assert.equal(stored.type, i % 2 === 0 ? 'identify' : 'track')
          assert.equal(stored.receivedAt, at + i)
          assert.deepEqual(stored.payload, JSON.parse(message(source, id).payloadJson))
        }
        assert.deepEqual((await store.ingest([message(source, '😀-emoji')])).stored, [false])
      },
    )

    withStore(
      'dedupe window, a store option: a messageId older than the window is accepted again',
      async ({ store, second }) => {
        const source = await store.createSource({ name: 'S', enabled: true })
        const now = Date.now()
        await store.ingest([message(source, 'old', { receivedAt: now - 2 * HOUR, type: 'identify' })])
        // Inside this store's window (the default, 24 h) it is a duplicate; for a store opened on the
        // same data with a 1 h window it has expired.
        assert.deepEqual((await store.ingest([message(source, 'old')])).stored, [false])
        const hourly = await second({ dedupeWindowMs: HOUR })
        assert.deepEqual((await hourly.ingest([message(source, 'old', { type: 'page' })])).stored, [true])
        // Now received again just now: a duplicate even for the 1 h window.
        assert.deepEqual((await hourly.ingest([message(source, 'old')])).stored, [false])
        assert.equal(await store.countMessages(source.id), 2)
        assert.equal((await store.getMessage(source.id, 'old'))?.type, 'page', 'the newest copy is returned')
        assert.deepEqual(await store.getSourceStats(source.id), {
          accepted: 2,
          duplicates: 2,
          rejected: 0,
          suppressed: 0,
        })
      },
    )

    withStore('routing: enabled, connected destinations whose type the router allowed', async ({ store }) => {
      const source = await store.createSource({ name: 'S', enabled: true })
      const lonely = await store.createSource({ name: 'L', enabled: true })
      const on = await webhooks(store, [source], { name: 'on' })
      const also = await webhooks(store, [source], { name: 'also' })
      const off = await webhooks(store, [source], { name: 'off', enabled: false })
      const result = await store.ingest([
        message(source, 'all'),
        message(source, 'none', { routeTo: [] }),
        message(lonely, 'unconnected'),
        message(source, 'all'), // duplicate: no deliveries
      ])
      assert.equal(result.deliveriesCreated, 2)
      assert.equal(await store.countDeliveries({ destinationId: on.id }), 1)
      assert.equal(await store.countDeliveries({ destinationId: also.id }), 1)
      assert.equal(await store.countDeliveries({ destinationId: off.id }), 0)
      const [delivery] = await store.listDeliveries(on.id, { limit: 10 })
      assert.equal(delivery?.messageId, 'all')
      assert.equal(delivery?.sourceId, source.id)
      assert.equal(delivery?.status, 'pending')
      assert.equal(delivery?.attemptCount, 0)
      assert.deepEqual(delivery?.attempts, [])

      // Disabled later: no new deliveries, pending ones stay.
      await store.updateDestination(on.id, { enabled: false })
      assert.equal((await store.ingest([message(source, 'later')])).deliveriesCreated, 1)
      assert.equal(await store.countDeliveries({ destinationId: on.id, status: 'pending' }), 1)
      assert.equal(await store.countDeliveries({ destinationId: also.id }), 2)
    })

    withStore(
      'claims: due first, limited, leased ones skipped, expired leases reclaimable, release',
      async ({ store }) => {
        const { destination } = await backlog(store, 3)
        const now = Date.now() + 1
        const lease = 30_000
        const first = await store.claimDeliveries(destination.id, 2, now, lease)
        assert.equal(first.length, 2)
        const claimed = first[0]!
        assert.equal(claimed.destinationId, destination.id)
        assert.equal(claimed.attemptCount, 0)
        assert.equal(claimed.firstAttemptAt, null)
        assert.deepEqual(claimed.closedUrls, [])
        assert.equal(typeof claimed.payload.messageId, 'string')
        const rest = await store.claimDeliveries(destination.id, 10, now, lease)
        assert.equal(rest.length, 1)
        assert.equal(new Set([...first, ...rest].map((d) => d.id)).size, 3)
        assert.deepEqual(await store.claimDeliveries(destination.id, 10, now, lease), [], 'all leased')
        assert.deepEqual(await store.claimDeliveries(destination.id, 0, now, lease), [])
        assert.equal(await store.nextDueAt(destination.id, now), null, 'leased deliveries are not due')
        assert.deepEqual(await store.claimDeliveries('dst_other', 10, now, lease), [])

        // A lease that ran out (its process died) makes the delivery claimable again.
        const later = now + lease + 1
        assert.ok((await store.nextDueAt(destination.id, later))! <= now)
        const reclaimed = await store.claimDeliveries(destination.id, 10, later, lease)
        assert.equal(reclaimed.length, 3)

        await store.releaseClaims([reclaimed[0]!.id])
        await store.releaseClaims([])
        const released = await store.claimDeliveries(destination.id, 10, later, lease)
        assert.deepEqual(
          released.map((d) => d.id),
          [reclaimed[0]!.id],
          'released at once, no need to wait for the lease',
        )
      },
    )

    withStore('two claimers never get the same delivery', async ({ store, second }) => {
      const other = await second()
      const { destination } = await backlog(store, 300)
      const seen = new Map<number, string>()
      const claimer = async (handle: Store, name: string) => {
        for (;;) {
          const claimed = await handle.claimDeliveries(destination.id, 7, Date.now(), 60_000)
          if (claimed.length === 0) return
          for (const delivery of claimed) {
            assert.equal(seen.get(delivery.id), undefined, `delivery ${delivery.id} claimed twice`)
            seen.set(delivery.id, name)
          }
        }
      }
      await Promise.all([
        claimer(store, 'a1'),
        claimer(other, 'b1'),
        claimer(store, 'a2'),
        claimer(other, 'b2'),
      ])
      assert.equal(seen.size, 300)
    })

    withStore(
      'an outcome recorded on another handle than the claim: its attempts count for the delivery’s destination',
      async ({ store, second }) => {
        const other = await second()
        const source = await store.createSource({ name: 'Two destinations', enabled: true })
        const a = await webhooks(store, [source], { name: 'Hooks A' })
        const b = await webhooks(store, [source], { name: 'Hooks B' })
        await store.ingest([message(source, 'm-0'), message(source, 'm-1')])
        const claimed = [
          ...(await store.claimDeliveries(a.id, 2, Date.now(), 30_000)),
          ...(await store.claimDeliveries(b.id, 2, Date.now(), 30_000)),
        ]
        assert.equal(claimed.length, 4)
        // The claiming handle records one of each destination, the other handle the rest.
        await store.recordOutcomes([outcome(claimed[0]!), outcome(claimed[2]!)])
        await other.recordOutcomes([outcome(claimed[1]!), outcome(claimed[3]!)])
        for (const destination of [a, b]) {
          assert.equal(await store.countDeliveries({ destinationId: destination.id, status: 'delivered' }), 2)
          assert.equal((await store.recentAttempts(destination.id, 10)).length, 2, destination.name)
        }
        const [delivery] = await store.listDeliveries(b.id, { limit: 1 })
        assert.equal(delivery?.attempts.length, 1)
      },
    )

    withStore(
      'recordOutcomes: states, attempts in order, closed URLs, leases released',
      async ({ store }) => {
        const { destination } = await backlog(store, 3)
        const claimed = await store.claimDeliveries(destination.id, 3, Date.now(), 30_000)
        assert.equal(claimed.length, 3)
        const [ok, retry, dead] = claimed as [ClaimedDelivery, ClaimedDelivery, ClaimedDelivery]
        const t0 = Date.now()
        const retryAt = t0 + 60_000
        await store.recordOutcomes([
          outcome(ok, {
            attempts: [
              attempt({
                url: 'https://a.example/',
                statusCode: 503,
                errorKind: 'http',
                errorText: 'HTTP 503',
                latencyMs: 30,
              }),
              attempt({ url: 'https://b.example/', statusCode: 204, responseExcerpt: null, latencyMs: 7 }),
            ],
            firstAttemptAt: t0,
          }),
          outcome(retry, {
            attempts: [
              attempt({
                statusCode: null,
                errorKind: 'timeout',
                errorText: 'no answer in 5 s',
                responseExcerpt: null,
              }),
            ],
            status: 'retrying',
            nextAttemptAt: retryAt,
            firstAttemptAt: t0,
            closedUrls: ['https://closed.example/'],
          }),
          outcome(dead, {
            attempts: [attempt({ statusCode: 500, errorKind: 'http' })],
            status: 'failed',
            deadLettered: true,
            firstAttemptAt: t0 - 1000,
          }),
        ])
        await store.recordOutcomes([])

        const delivered = await store.getDelivery(ok.id)
        assert.ok(delivered)
        assert.equal(delivered.status, 'delivered')
        assert.equal(delivered.attemptCount, 1)
        assert.equal(delivered.nextAttemptAt, null)
        assert.equal(delivered.firstAttemptAt, t0)
        assert.deepEqual(
          delivered.attempts.map((a) => [
            a.url,
            a.statusCode,
            a.errorKind,
            a.errorText,
            a.latencyMs,
            a.responseExcerpt,
          ]),
          [
            ['https://a.example/', 503, 'http', 'HTTP 503', 30, 'ok'],
            ['https://b.example/', 204, null, null, 7, null],
          ],
        )
        const retrying = await store.getDelivery(retry.id)
        assert.equal(retrying?.status, 'retrying')
        assert.equal(retrying?.nextAttemptAt, retryAt)
        assert.deepEqual(retrying?.closedUrls, ['https://closed.example/'])
        assert.equal(retrying?.deadLettered, false)
        const failed = await store.getDelivery(dead.id)
        assert.equal(failed?.status, 'failed')
        assert.equal(failed?.deadLettered, true)
        assert.equal(failed?.nextAttemptAt, null)
        assert.equal(await store.getDelivery(999_999), null)

        // Final deliveries are never claimed again; the retrying one only once it is due.
        assert.deepEqual(await store.claimDeliveries(destination.id, 10, t0 + 1, 30_000), [])
        assert.equal(await store.nextDueAt(destination.id, t0 + 1), retryAt)
        const again = await store.claimDeliveries(destination.id, 10, retryAt, 30_000)
        assert.equal(again.length, 1)
        assert.equal(again[0]!.id, retry.id)
        assert.equal(again[0]!.attemptCount, 1)
        assert.equal(again[0]!.firstAttemptAt, t0)
        assert.deepEqual(again[0]!.closedUrls, ['https://closed.example/'])
        // The first attempt's time is kept across attempts.
        await store.recordOutcomes([outcome(again[0]!, { firstAttemptAt: t0 + 999 })])
        const done = await store.getDelivery(retry.id)
        assert.equal(done?.firstAttemptAt, t0)
        assert.equal(done?.attemptCount, 2)
        assert.equal(done?.attempts.length, 2)
        assert.equal(await store.nextDueAt(destination.id, retryAt), null)
      },
    )

    withStore(
      'recordOutcomes with claims: outcomes committed, then each claim made as claimDeliveries makes it',
      async ({ store }) => {
        const { destination } = await backlog(store, 5)
        const now = Date.now()
        const lease = 30_000
        const first = await store.claimDeliveries(destination.id, 2, now, lease)
        assert.equal(first.length, 2)
        const [done, retry] = first as [ClaimedDelivery, ClaimedDelivery]
        const claimed = await store.recordOutcomes(
          [outcome(done), outcome(retry, { status: 'retrying', nextAttemptAt: now })],
          [
            { destinationId: destination.id, limit: 10, now, leaseMs: lease },
            { destinationId: 'dst_other', limit: 10, now, leaseMs: lease },
            { destinationId: destination.id, limit: 0, now, leaseMs: lease },
          ],
        )
        assert.equal(claimed.length, 3, 'one list per claim')
        const [mine, other, none] = claimed as [ClaimedDelivery[], ClaimedDelivery[], ClaimedDelivery[]]
        // The retrying delivery's lease was released by its outcome and it is due: claimed again, with
        // its recorded attempt; the delivered one is final and is not.
        assert.deepEqual(
          mine.map((d) => d.id).sort((a, b) => a - b),
          (await store.listDeliveries(destination.id, { status: 'pending', limit: 10 }))
            .map((d) => d.id)
            .concat(retry.id)
            .sort((a, b) => a - b),
        )
        assert.equal(mine.find((d) => d.id === retry.id)?.attemptCount, 1)
        assert.equal(typeof mine[0]!.payload.messageId, 'string')
        assert.equal(mine[0]!.destinationId, destination.id)
        assert.deepEqual(other, [])
        assert.deepEqual(none, [])
        assert.equal((await store.getDelivery(done.id))?.status, 'delivered')
        assert.deepEqual(await store.claimDeliveries(destination.id, 10, now, lease), [], 'all leased')
        assert.deepEqual(await store.recordOutcomes([]), [])
        // Claims alone, without outcomes: leases that ran out are claimed again.
        const [again] = await store.recordOutcomes(
          [],
          [{ destinationId: destination.id, limit: 10, now: now + lease + 1, leaseMs: lease }],
        )
        assert.equal(again?.length, 4)
      },
    )

    withStore('listDeliveries: newest first, status filter, id cursor', async ({ store }) => {
      const { destination } = await backlog(store, 5)
      const all = await store.listDeliveries(destination.id, { limit: 10 })
      assert.equal(all.length, 5)
      const ids = all.map((d) => d.id)
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => b - a),
      )
      const page = await store.listDeliveries(destination.id, { limit: 2, before: ids[1]! })
      assert.deepEqual(
        page.map((d) => d.id),
        ids.slice(2, 4),
      )
      const [claimed] = await store.claimDeliveries(destination.id, 1, Date.now(), 30_000)
      await store.recordOutcomes([outcome(claimed!)])
      const delivered = await store.listDeliveries(destination.id, { status: 'delivered', limit: 10 })
      assert.deepEqual(
        delivered.map((d) => d.id),
        [claimed!.id],
      )
      assert.equal(delivered[0]!.attempts.length, 1)
      assert.equal((await store.listDeliveries(destination.id, { status: 'pending', limit: 10 })).length, 4)
      assert.deepEqual(await store.listDeliveries('dst_missing', { limit: 10 }), [])
    })

    withStore(
      'replay: only final deliveries, by ids or by filter, with a fresh window',
      async ({ store }) => {
        const { destination } = await backlog(store, 4)
        const claimed = await store.claimDeliveries(destination.id, 3, Date.now(), 30_000)
        const [ok, dead, bounced] = claimed as [ClaimedDelivery, ClaimedDelivery, ClaimedDelivery]
        const t0 = Date.now()
        await store.recordOutcomes([
          outcome(ok),
          outcome(dead, { status: 'failed', deadLettered: true, closedUrls: ['https://example.com/hook'] }),
          outcome(bounced, { status: 'failed' }),
        ])
        const pending = (await store.listDeliveries(destination.id, { status: 'pending', limit: 10 }))[0]!

        const at = t0 + 5_000
        assert.equal(await store.replayDeliveries({ ids: [ok.id, dead.id, pending.id, 999_999] }, at), 2)
        for (const id of [ok.id, dead.id]) {
          const replayed = await store.getDelivery(id)
          assert.equal(replayed?.status, 'pending')
          assert.equal(replayed?.deadLettered, false)
          assert.equal(replayed?.nextAttemptAt, at)
          assert.equal(replayed?.firstAttemptAt, null)
          assert.deepEqual(replayed?.closedUrls, [])
          assert.equal(replayed?.attemptCount, 1, 'history is kept')
          assert.equal(replayed?.attempts.length, 1)
        }
        assert.equal(
          (await store.getDelivery(pending.id))?.nextAttemptAt,
          pending.nextAttemptAt,
          'pending untouched',
        )
        assert.equal(await store.replayDeliveries({ ids: [] }, at), 0)

        assert.equal(
          await store.replayDeliveries(
            { destinationId: destination.id, status: 'failed', since: t0 + 60_000 },
            at,
          ),
          0,
        )
        assert.equal(await store.replayDeliveries({ destinationId: destination.id, status: 'failed' }, at), 1)
        assert.equal((await store.getDelivery(bounced.id))?.status, 'pending')
        assert.equal(
          await store.replayDeliveries({ destinationId: destination.id, status: 'delivered' }, at),
          0,
        )
        // Replayed deliveries are claimable at `at`.
        assert.equal((await store.claimDeliveries(destination.id, 10, at, 30_000)).length, 4)
      },
    )

    withStore(
      "ingest: a destination's subscription and filters decide at routing; what they keep out is counted, with no delivery",
      async ({ store }) => {
        const source = await store.createSource({ name: 'Gated', enabled: true })
        const open = await webhooks(store, [source], { name: 'Open' })
        const gated = await webhooks(store, [source], {
          name: 'Gated',
          settings: {
            webhooks: [{ url: 'https://example.com/gated', headers: {} }],
            sharedSecret: null,
            subscription: 'event = "Keep"',
            filters: [{ action: 'sample', percent: 50 }],
          },
        })
        const batch = (from: number) =>
          Array.from({ length: 40 }, (_, i) => {
            const messageId = `g-${from + i}`
            const event = i % 2 === 0 ? 'Keep' : 'Other'
            return message(source, messageId, {
              payloadJson: JSON.stringify({ type: 'track', event, messageId }),
            })
          })
        const kept = (messages: AcceptedMessage[]) =>
          messages.filter((m) => JSON.parse(m.payloadJson).event === 'Keep' && sampledIn(m.messageId, 50))
            .length
        const first = batch(0)
        const second = batch(40)
        assert.equal((await store.ingest(first)).deliveriesCreated, 40 + kept(first))
        assert.equal((await store.ingest(second)).deliveriesCreated, 40 + kept(second))
        // Duplicates are not routed again, nor counted.
        await store.ingest(first)
        const keptInAll = kept(first) + kept(second)
        assert.ok(keptInAll > 0 && keptInAll < 40)
        assert.equal(await store.countDeliveries({ destinationId: gated.id }), keptInAll)
        assert.equal(await store.countDeliveries({ destinationId: open.id }), 80)
        const stats = await store.deliveryStats(gated.id)
        assert.equal(stats.filtered, 40)
        assert.equal(stats.sampledOut, 40 - keptInAll)
        assert.equal((await store.deliveryStats(open.id)).filtered, 0)
        // A changed subscription applies from the next commit on.
        await store.updateDestination(gated.id, {
          settings: {
            webhooks: gated.settings.webhooks,
            sharedSecret: null,
            subscription: 'event = "Other"',
          },
        })
        assert.equal((await store.ingest(batch(80))).deliveriesCreated, 40 + 20)
        assert.equal((await store.deliveryStats(gated.id)).filtered, 60)
      },
    )

    withStore(
      'recentMessages: the newest calls of the sources in a window, newest first',
      async ({ store }) => {
        const [a, b, c] = await Promise.all(
          ['A', 'B', 'C'].map((name) => store.createSource({ name, enabled: true })),
        )
        const now = Date.now()
        // One commit each: within one commit, the store orders calls its own way.
        await store.ingest([message(a!, 'a-1', { receivedAt: now - 3_000 })])
        await store.ingest([message(b!, 'b-1', { receivedAt: now - 2_000 })])
        await store.ingest([message(c!, 'c-1', { receivedAt: now - 1_500 })])
        await store.ingest([message(a!, 'a-2', { receivedAt: now - 1_000 })])
        const ids = async (limit: number, from: number, to: number) =>
          (await store.recentMessages([a!.id, b!.id], limit, from, to)).map((m) => m.messageId)
        assert.deepEqual(await ids(10, 0, now + 1), ['a-2', 'b-1', 'a-1'])
        assert.deepEqual(await ids(2, 0, now + 1), ['a-2', 'b-1'])
        assert.deepEqual(await ids(10, now - 2_500, now - 1_000), ['b-1'])
        const [first] = await store.recentMessages([c!.id], 1, 0, now + 1)
        assert.deepEqual(first?.payload, JSON.parse(message(c!, 'c-1').payloadJson))
      },
    )

    withStore('deliveryStats: counts per state, dead letters, latency percentiles', async ({ store }) => {
      const { destination } = await backlog(store, 24)
      const empty = await store.deliveryStats(destination.id)
      assert.deepEqual(empty, {
        pending: 24,
        retrying: 0,
        delivered: 0,
        failed: 0,
        deadLettered: 0,
        latencyP50Ms: null,
        latencyP95Ms: null,
        filtered: 0,
        sampledOut: 0,
      })
      const claimed = await store.claimDeliveries(destination.id, 20, Date.now(), 30_000)
      await store.recordOutcomes(
        claimed.map((c, i) =>
          outcome(c, {
            attempts: [attempt({ latencyMs: i + 1 })],
            ...(i < 15
              ? {}
              : i < 17
                ? { status: 'retrying' as const, nextAttemptAt: Date.now() + 60_000 }
                : i < 19
                  ? { status: 'failed' as const, deadLettered: true }
                  : { status: 'failed' as const }),
          }),
        ),
      )
      assert.deepEqual(await store.deliveryStats(destination.id), {
        pending: 4,
        retrying: 2,
        delivered: 15,
        failed: 3,
        deadLettered: 2,
        latencyP50Ms: 11,
        latencyP95Ms: 20,
        filtered: 0,
        sampledOut: 0,
      })
    })

    withStore(
      'delivery figures: minutes are rolled up once settled, a day at most per run, and read the same rolled up or not',
      async ({ store }) => {
        const { destination } = await backlog(store, 3)
        const now = Date.now()
        const dayOne = Math.floor((now - 3 * DAY) / 60_000) * 60_000
        const claimed = await store.claimDeliveries(destination.id, 3, now, 30_000)
        assert.equal(claimed.length, 3)
        const attemptsAt = [
          attempt({ attemptedAt: dayOne + 5_000, latencyMs: 12 }),
          attempt({ attemptedAt: dayOne + DAY + 120_000, statusCode: 503, latencyMs: 700 }),
          // Not settled yet: its minute may still get attempts.
          attempt({ attemptedAt: now - 30_000, latencyMs: 30 }),
        ]
        await store.recordOutcomes(claimed.map((c, i) => outcome(c, { attempts: [attemptsAt[i]!] })))
        // By minute: minutes not rolled up yet come in the order the aggregate gives them.
        const figures = async () =>
          (await store.deliveryMinutes(destination.id, dayOne, now + 60_000)).sort(
            (a, b) => a.minute - b.minute,
          )
        const live = await figures()
        assert.deepEqual(
          live.map((m) => [m.minute, m.succeeded, m.failed]),
          [
            [dayOne, 1, 0],
            [dayOne + DAY + 120_000, 0, 1],
            [Math.floor((now - 30_000) / 60_000) * 60_000, 1, 0],
          ],
        )
        // The first run starts at the oldest attempt's minute and stops a day later; each next run
        // carries on from there, up to the last minute that ended two minutes ago.
        assert.equal(await store.rollUpDeliveries(now), 1)
        assert.equal(await store.rollUpDeliveries(now), 1)
        assert.equal(await store.rollUpDeliveries(now), 0)
        assert.equal(await store.rollUpDeliveries(now), 0, 'nothing left to roll up')
        assert.deepEqual(await figures(), live)
      },
    )

    withStore(
      'deliveryBacklog: pending and retrying per destination, earliest due time',
      async ({ store }) => {
        assert.deepEqual(await store.deliveryBacklog(), [])
        const before = Date.now()
        const { destination } = await backlog(store, 6)
        const quiet = await webhooks(store, [await store.createSource({ name: 'Quiet', enabled: true })])
        const [first] = await store.deliveryBacklog()
        assert.equal(first?.destinationId, destination.id)
        assert.equal(first.pending, 6)
        assert.equal(first.retrying, 0)
        assert.ok(
          first.oldestDueAt !== null && first.oldestDueAt >= before && first.oldestDueAt <= Date.now(),
        )
        const retryAt = Date.now() + 60_000
        const claimed = await store.claimDeliveries(destination.id, 4, Date.now(), 30_000)
        await store.recordOutcomes(
          claimed.map((c, i) =>
            outcome(c, i < 2 ? { status: 'retrying', nextAttemptAt: retryAt } : { status: 'delivered' }),
          ),
        )
        // Claimed deliveries still wait; delivered ones do not; a destination with nothing waiting is absent.
        assert.deepEqual(await store.deliveryBacklog(), [
          { destinationId: destination.id, pending: 2, retrying: 2, oldestDueAt: first.oldestDueAt },
        ])
        assert.notEqual(quiet.id, destination.id)
      },
    )

    withStore(
      'sweep: old messages whose deliveries are all final go, with their deliveries and attempts',
      async ({ store }) => {
        const source = await store.createSource({ name: 'S', enabled: true })
        const lonely = await store.createSource({ name: 'L', enabled: true })
        const destination = await webhooks(store, [source])
        const now = Date.now()
        const old = now - 10 * DAY
        await store.ingest([
          message(source, 'old-final', { receivedAt: old }),
          message(source, 'old-pending', { receivedAt: old }),
          message(lonely, 'old-undelivered', { receivedAt: old }),
        ])
        await store.ingest([message(source, 'young-final')])
        const claimed = await store.claimDeliveries(destination.id, 10, Date.now(), 30_000)
        assert.equal(claimed.length, 3)
        const byMessage = new Map(claimed.map((c) => [c.payload.messageId as string, c]))
        await store.recordOutcomes([
          outcome(byMessage.get('old-final')!),
          outcome(byMessage.get('young-final')!),
        ])
        await store.releaseClaims([byMessage.get('old-pending')!.id])

        // Retention waits for profiles to consume a message (the server's profile worker does this).
        while ((await store.consumeIntoProfiles()) > 0) {}
        assert.deepEqual(await store.sweep(now - DAY), { messages: 2 })
        assert.equal(await store.getMessage(source.id, 'old-final'), null)
        assert.equal(await store.getMessage(lonely.id, 'old-undelivered'), null)
        assert.ok(await store.getMessage(source.id, 'old-pending'), 'a pending delivery keeps its message')
        assert.ok(await store.getMessage(source.id, 'young-final'))
        assert.equal(
          await store.getDelivery(byMessage.get('old-final')!.id),
          null,
          'its delivery and attempts go too',
        )
        assert.equal(await store.countDeliveries({ destinationId: destination.id }), 2)
        assert.deepEqual(await store.sweep(now - DAY), { messages: 0 })
        // The swept messageIds are long out of the window: accepted again.
        assert.deepEqual((await store.ingest([message(source, 'old-final')])).stored, [true])
      },
    )

    withStore('countMessages and countDeliveries filters', async ({ store }) => {
      const { source, destination } = await backlog(store, 4)
      const other = await webhooks(store, [source], { name: 'other' })
      await store.ingest([message(source, 'x')])
      assert.equal(await store.countMessages(), 5)
      assert.equal(await store.countMessages(source.id), 5)
      assert.equal(await store.countMessages('src_missing'), 0)
      assert.equal(await store.countDeliveries(), 6)
      assert.equal(await store.countDeliveries({ destinationId: destination.id }), 5)
      assert.equal(await store.countDeliveries({ destinationId: other.id }), 1)
      assert.equal(await store.countDeliveries({ status: 'pending' }), 6)
      assert.equal(await store.countDeliveries({ destinationId: other.id, status: 'delivered' }), 0)
    })

    withStore('deleting a source or destination removes their messages and deliveries', async ({ store }) => {
      const { source, destination } = await backlog(store, 3)
      const keep = await store.createSource({ name: 'Keep', enabled: true })
      const other = await webhooks(store, [source, keep], { name: 'other' })
      await store.ingest([message(source, 's'), message(keep, 'k')])
      assert.equal(await store.countDeliveries(), 6)
      assert.equal(await store.deleteDestination(destination.id), true)
      assert.equal(await store.countDeliveries(), 2)
      assert.equal(await store.deleteSource(source.id), true)
      assert.equal(await store.countMessages(), 1)
      assert.equal(await store.countDeliveries(), 1)
      assert.equal(await store.countDeliveries({ destinationId: other.id }), 1)
    })

    withStore(
      'watch: deliveries after an ingest that created some and after a replay, config after destination changes, heard before the call resolves',
      async ({ store }) => {
        const events: StoreEvent[] = []
        const unwatch = await store.watch((event) => events.push(event))
        /** What the listener heard by the time `work` resolved (announcements from before are let settle first). */
        const heard = async (work: () => Promise<unknown>): Promise<StoreEvent[]> => {
          await settle()
          events.length = 0
          await work()
          return [...events]
        }
        const source = await store.createSource({ name: 'S', enabled: true })
        assert.deepEqual(
          await heard(() => store.ingest([message(source, 'unrouted')])),
          ['messages'],
          'an ingest that created no deliveries announces only messages (for the profile worker)',
        )
        let destination: Destination | undefined
        assert.ok(
          (
            await heard(async () => {
              destination = await webhooks(store, [source])
            })
          ).includes('config'),
          'destination created → config',
        )
        assert.ok(
          (await heard(() => store.ingest([message(source, 'routed')]))).includes('deliveries'),
          'deliveries created → deliveries',
        )
        assert.ok(
          (await heard(() => store.updateDestination(destination!.id, { name: 'renamed' }))).includes(
            'config',
          ),
          'destination updated → config',
        )
        const [claimed] = await store.claimDeliveries(destination!.id, 1, Date.now(), 30_000)
        await store.recordOutcomes([outcome(claimed!, { status: 'failed' })])
        assert.ok(
          (await heard(() => store.replayDeliveries({ ids: [claimed!.id] }, Date.now()))).includes(
            'deliveries',
          ),
          'replay → deliveries',
        )
        assert.ok(
          (await heard(() => store.deleteDestination(destination!.id))).includes('config'),
          'destination deleted → config',
        )
        await unwatch()
        assert.deepEqual(await heard(() => webhooks(store, [source])), [], 'nothing after unwatch')
      },
    )

    withStore(
      'write keys: a rotation, a disable and a delete are seen by getSourceByWriteKey at once',
      async ({ store }) => {
        const source = await store.createSource({ name: 'S', enabled: true })
        assert.equal((await store.getSourceByWriteKey(source.writeKey))?.id, source.id)
        // A store that caches only while it hears other processes' changes (PostgreSQL) starts now.
        await settle(300)
        assert.equal((await store.getSourceByWriteKey(source.writeKey))?.id, source.id, 'cached')
        const rotated = await store.updateSource(source.id, { rotateWriteKey: true })
        assert.equal(
          await store.getSourceByWriteKey(source.writeKey),
          null,
          'the old key stops working at once',
        )
        assert.equal((await store.getSourceByWriteKey(rotated!.writeKey))?.enabled, true)
        await store.updateSource(source.id, { enabled: false })
        assert.equal((await store.getSourceByWriteKey(rotated!.writeKey))?.enabled, false, 'disabled at once')
        await store.deleteSource(source.id)
        assert.equal(await store.getSourceByWriteKey(rotated!.writeKey), null, 'deleted at once')
      },
    )

    withStore(
      'config: applyConfig writes sources, destinations and computations together, or nothing',
      async ({ store }) => {
        const kept = await store.createSource({ name: 'Kept', enabled: true })
        const gone = await store.createSource({ name: 'Gone', enabled: true })
        await settle(300) // a store that caches write keys while it hears changes starts now
        assert.equal((await store.getSourceByWriteKey(kept.writeKey))?.id, kept.id)
        const settings: WebhooksSettings = {
          webhooks: [{ url: 'https://example.com/h', headers: {} }],
          sharedSecret: 's',
        }
        const none = { create: [], update: [], delete: [] }
        const applied = await store.applyConfig({
          sources: {
            create: [{ name: 'New', enabled: false, writeKey: 'new-write-key-0123456789' }],
            update: [{ id: kept.id, writeKey: 'replaced-write-key-0123456789' }],
            delete: [gone.id],
          },
          destinations: {
            create: [
              {
                name: 'Hook',
                type: 'webhooks',
                enabled: true,
                sources: [{ created: 'New' }, { id: kept.id }],
                settings,
              },
            ],
            update: [],
            delete: [],
          },
          computedTraits: {
            create: [
              {
                name: 'Orders',
                key: 'orders',
                enabled: false,
                definition: {
                  kind: 'count',
                  event: 'Order Completed',
                  property: null,
                  where: [],
                  withinDays: null,
                },
                destinations: [{ created: 'Hook' }],
              },
            ],
            update: [],
            delete: [],
          },
          audiences: none,
        })
        assert.deepEqual(applied, { applied: true })
        const sources = await store.listSources()
        const created = sources.find((source) => source.name === 'New')!
        assert.deepEqual(sources.map((source) => source.name).sort(), ['Kept', 'New'])
        assert.equal(created.writeKey, 'new-write-key-0123456789')
        assert.equal(created.enabled, false)
        assert.equal(
          await store.getSourceByWriteKey(kept.writeKey),
          null,
          'a replaced write key stops at once',
        )
        assert.equal((await store.getSourceByWriteKey('replaced-write-key-0123456789'))?.id, kept.id)
        const [hook] = await store.listDestinations()
        assert.deepEqual(hook!.sourceIds.sort(), [created.id, kept.id].sort())
        assert.deepEqual(hook!.settings, settings)
        const [trait] = await store.listComputedTraits()
        assert.deepEqual(trait!.destinationIds, [hook!.id])
        assert.equal(trait!.status, 'disabled', 'created disabled, in the same transaction')

        // One write that finds nothing to change undoes the others.
        const stale = await store.applyConfig({
          sources: {
            create: [{ name: 'Undone', enabled: true, writeKey: null }],
            update: [],
            delete: [kept.id],
          },
          destinations: { create: [], update: [{ id: hook!.id, enabled: false }], delete: ['dst_missing'] },
          computedTraits: none,
          audiences: none,
        })
        assert.equal(stale.applied, false)
        assert.match(stale.applied ? '' : stale.reason, /delete destination dst_missing/)
        assert.deepEqual((await store.listSources()).map((source) => source.name).sort(), ['Kept', 'New'])
        assert.equal((await store.getDestination(hook!.id))?.enabled, true)
        // An object to create that exists by now (another apply made it) undoes the apply too.
        const taken = await store.applyConfig({
          sources: { create: [{ name: 'New', enabled: true, writeKey: null }], update: [], delete: [] },
          destinations: none,
          computedTraits: none,
          audiences: none,
        })
        assert.equal(taken.applied, false)
        assert.equal((await store.listSources()).length, 2)
      },
    )
  })
}
