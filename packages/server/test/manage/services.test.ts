/**
 * The domain services the management API and the CLI share, driven directly on a real SQLite store:
 * the rules they hold whoever calls them, and the changes the store announces for what they write (the
 * delivery engine hears those, so no service wakes it by hand).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, beforeEach, describe, test } from 'node:test'
import { DeliveryService } from '../../src/domain/delivery-service.ts'
import { DestinationService } from '../../src/domain/destination-service.ts'
import type { DestinationType } from '../../src/domain/destinations.ts'
import { ConflictError, NotFoundError, ValidationError } from '../../src/domain/errors.ts'
import { NAME_MAX_LENGTH } from '../../src/domain/names.ts'
import { SourceService } from '../../src/domain/source-service.ts'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import type { Store, StoreEvent } from '../../src/store/store.ts'
import { attempt, message } from '../store/contract.ts'

const settings = { webhooks: [{ url: 'https://hooks.example.com/sluice' }] }

describe('domain services', () => {
  let dataDir: string
  let store: Store
  /** What the store announced, in order. */
  let changes: StoreEvent[]
  let sources: SourceService
  let destinations: DestinationService
  let deliveries: DeliveryService

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'sluice-services-'))
    store = new SqliteStore({ dataDir, synchronous: 'NORMAL' })
    await store.migrate()
    await store.watch((change) => {
      changes.push(change)
    })
    sources = new SourceService(store)
    destinations = new DestinationService(store)
    deliveries = new DeliveryService(store)
  })
  beforeEach(() => {
    changes = []
  })
  after(async () => {
    await store.close()
    await rm(dataDir, { recursive: true, force: true })
  })

  /** A destination on a new source, with `count` failed deliveries and one still pending. */
  async function destinationWithFailures(count: number) {
    const { source } = await sources.create({ name: 'Shop' })
    const { destination } = await destinations.create({
      name: 'Hooks',
      type: 'webhooks',
      sourceIds: [source.id],
      settings,
    })
    await store.ingest(Array.from({ length: count }, (_, index) => message(source, `failed-${index}`)))
    const now = Date.now()
    const claimed = await store.claimDeliveries(destination.id, count, now, 30_000)
    await store.recordOutcomes(
      claimed.map((delivery) => ({
        deliveryId: delivery.id,
        attempts: [attempt({ statusCode: 400, errorKind: 'http', errorText: 'Bad Request' })],
        status: 'failed',
        deadLettered: false,
        nextAttemptAt: null,
        firstAttemptAt: now,
        closedUrls: [],
      })),
    )
    await store.ingest([message(source, 'pending')])
    changes = []
    return destination
  }

  describe('names', () => {
    test('are trimmed, and measured in characters as given, like the API schema measures them', async () => {
      assert.equal((await sources.create({ name: '  Website \n' })).source.name, 'Website')
      // Astral characters are one character each, as JSON Schema's maxLength counts them.
      const longest = '🚀'.repeat(NAME_MAX_LENGTH)
      assert.equal((await sources.create({ name: longest })).source.name, longest)
      await assert.rejects(
        sources.create({ name: `${longest}x` }),
        new ValidationError('/name', 'name is too long; at most 200 characters are allowed.'),
      )
      await assert.rejects(sources.create({ name: ` ${'x'.repeat(NAME_MAX_LENGTH)}` }), ValidationError)
    })

    test('need a visible character, on update too', async () => {
      const { source } = await sources.create({ name: 'Kept' })
      await assert.rejects(
        sources.update(source.id, { name: ' \t ' }),
        new ValidationError('/name', 'name must contain at least one visible character.'),
      )
      assert.equal((await sources.get(source.id)).source.name, 'Kept')
    })
  })

  test('a missing source is a NotFoundError naming it, for every operation', async () => {
    for (const operation of [
      () => sources.get('src_gone'),
      () => sources.update('src_gone', { enabled: false }),
      () => sources.rotateWriteKey('src_gone'),
      () => sources.delete('src_gone'),
    ]) {
      await assert.rejects(operation(), (error: unknown) => {
        assert.ok(error instanceof NotFoundError)
        assert.equal(error.code, 'source_not_found')
        assert.match(error.message, /"src_gone"/)
        return true
      })
    }
  })

  describe('destinations', () => {
    test('report every committed change, and none for a refused one', async () => {
      const { source } = await sources.create({ name: 'Connected' })
      const { destination } = await destinations.create({
        name: 'Hooks',
        type: 'webhooks',
        sourceIds: [source.id],
        settings,
      })
      await destinations.update(destination.id, { enabled: false })
      await destinations.delete(destination.id)
      assert.deepEqual(changes, ['config', 'config', 'config'])

      changes = []
      await assert.rejects(
        destinations.create({ name: 'Hooks', type: 'webhooks', sourceIds: ['src_nope'], settings }),
        new ValidationError(
          '/sourceIds/0',
          'sourceIds[0]: no source has id "src_nope". Use the id of an existing source (GET /api/v1/sources).',
        ),
      )
      await assert.rejects(
        destinations.create({ name: 'Hooks', type: 'webhooks', settings: { webhooks: [] } }),
        ValidationError,
      )
      await assert.rejects(destinations.update(destination.id, { enabled: true }), NotFoundError)
      await assert.rejects(destinations.delete(destination.id), NotFoundError)
      assert.deepEqual(changes, [])
    })

    test('refuse a kind Sluice cannot deliver to, naming the kinds it can', async () => {
      await assert.rejects(
        destinations.create({ name: 'Hooks', type: 'kafka' as DestinationType, settings }),
        new ValidationError('/type', 'type must be one of: "webhooks".'),
      )
    })
  })

  describe('deliveries', () => {
    test('replaying one final delivery reports it; refusing a pending one reports nothing', async () => {
      const destination = await destinationWithFailures(1)
      const page = await deliveries.list(destination.id)
      const [pending, failed] = page.deliveries
      assert.equal(pending?.status, 'pending')
      assert.equal(failed?.status, 'failed')

      const replayed = await deliveries.replay(failed!.id)
      assert.equal(replayed.status, 'pending', 'answered as scheduled')
      assert.deepEqual(changes, ['deliveries'])

      changes = []
      await assert.rejects(deliveries.replay(pending!.id), (error: unknown) => {
        assert.ok(error instanceof ConflictError)
        assert.equal(error.code, 'already_scheduled')
        assert.match(error.message, /Only delivered or failed deliveries can be replayed/)
        return true
      })
      await assert.rejects(deliveries.replay(987_654_321), NotFoundError)
      assert.deepEqual(changes, [])
    })

    test('a bulk replay reports only when it scheduled something', async () => {
      const destination = await destinationWithFailures(2)
      assert.equal(await deliveries.replayDestination(destination.id, { status: 'delivered' }), 0)
      assert.deepEqual(changes, [])
      assert.equal(await deliveries.replayDestination(destination.id), 2, 'failed ones by default')
      assert.deepEqual(changes, ['deliveries'])
    })

    test('pages hold 1 to 500 deliveries; other sizes are refused with the range', async () => {
      const destination = await destinationWithFailures(2)
      const first = await deliveries.list(destination.id, { limit: 2 })
      assert.equal(first.deliveries.length, 2)
      assert.equal(first.nextCursor, first.deliveries[1]!.id)
      const last = await deliveries.list(destination.id, { limit: 2, before: first.nextCursor! })
      assert.deepEqual([last.deliveries.length, last.nextCursor], [1, null])
      for (const limit of [0, 501, 2.5]) {
        await assert.rejects(deliveries.list(destination.id, { limit }), (error: unknown) => {
          assert.ok(error instanceof ValidationError)
          assert.equal(error.field, '/limit')
          assert.match(error.message, /from 1 to 500/)
          return true
        })
      }
    })
  })
})
