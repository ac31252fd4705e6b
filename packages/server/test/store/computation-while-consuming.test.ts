// A computation created while a batch of calls is being consumed: the batch marks for evaluation the
// profiles whose calls a computation reads, judged by the computations it read while planning; the
// computation's backfill queues the profiles that exist when it commits. A batch planned before the
// computation committed and applied after it creates profiles that neither queued: they were never
// evaluated (no audience identify) until their next call. Such a batch must not apply; it is planned
// again, against the new computation.
//
// Each test drives the two steps in that order. On PostgreSQL through the store, with a third
// connection ("gate") holding the profile cursor so that the computation's transaction queues for it
// first and the batch's, already planned, queues behind it. On both stores also directly: the batch is
// planned over its own connection and the computation is committed between its plan and its apply.
//
// The same for evaluation's status step: an evaluation that read the queue empty and then the
// computations, among them one created in between, must not mark that one live while its backfill is
// still queued.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import pg from 'pg'
import type { Destination } from '../../src/domain/destinations.ts'
import type { Source } from '../../src/domain/sources.ts'
import { consumeMessages } from '../../src/profile/consume.ts'
import { evaluateQueued } from '../../src/profile/evaluation.ts'
import { SILENT_LOGGER } from '../../src/store/postgres/connection.ts'
import { PostgresDatabase } from '../../src/store/postgres/database.ts'
import { postgresComputations } from '../../src/store/postgres/sql/computations.ts'
import { postgresProfiles } from '../../src/store/postgres/sql/profiles.ts'
import { SqliteDatabase } from '../../src/store/sqlite/database.ts'
import { IngestHandoff } from '../../src/store/sqlite/ingest-handoff.ts'
import { sqliteComputations } from '../../src/store/sqlite/sql/computations.ts'
import { sqliteProfiles } from '../../src/store/sqlite/sql/profiles.ts'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import type { Store } from '../../src/store/store.ts'
import type { ComputationsSql } from '../../src/store/tables/computations.ts'
import type { ProfilesSql } from '../../src/store/tables/profiles.ts'
import { backendPid, freshSchema, openPgStore, pollUntil, TEST_DATABASE_URL, waitersFor } from './pg.ts'
import { call, drain, settle, sourceAndHook, syncPayloads } from './profile-backends.ts'

/** A store, and the profile tables over a connection of its own to the same database. */
interface Backend {
  name: string
  open(): Promise<{
    store: Store
    beside: { profiles: ProfilesSql; computations: ComputationsSql }
    cleanup(): Promise<void>
  }>
}

const backends: Backend[] = [
  {
    name: 'sqlite',
    async open() {
      const dataDir = await mkdtemp(join(tmpdir(), 'sluice-consuming-'))
      const store = new SqliteStore({ dataDir, synchronous: 'NORMAL' })
      await store.migrate()
      const db = new SqliteDatabase({ dataDir, synchronous: 'NORMAL' })
      return {
        store,
        beside: { profiles: sqliteProfiles(db, new IngestHandoff()), computations: sqliteComputations(db) },
        async cleanup() {
          db.close()
          await store.close()
          await rm(dataDir, { recursive: true, force: true })
        },
      }
    },
  },
  {
    name: 'postgres',
    async open() {
      const { schema, drop } = await freshSchema()
      const store = await openPgStore(schema)
      const db = new PostgresDatabase(
        { connectionString: TEST_DATABASE_URL, schema, poolSize: 2 },
        SILENT_LOGGER,
      )
      return {
        store,
        beside: { profiles: postgresProfiles(db), computations: postgresComputations(db) },
        async cleanup() {
          await db.end()
          await store.close()
          await drop()
        },
      }
    },
  },
]

/** A source, a hook, and ada's one call stored (not yet consumed). */
async function setUp(store: Store): Promise<{ source: Source; destination: Destination }> {
  const { source, destination } = await sourceAndHook(store)
  await store.ingest([call(source, { userId: 'ada', event: 'Order Completed' })])
  return { source, destination }
}

const createAudience = (store: Store, destination: Destination) =>
  store.createAudience({
    name: 'Big Spenders',
    key: 'big_spenders',
    definition: { event: 'Order Completed' },
    destinationIds: [destination.id],
    includeAnonymous: false,
  })

/** Ada, whose only call was consumed around the audience's creation, is in it and her identify is queued. */
async function assertEvaluated(store: Store, destination: Destination): Promise<void> {
  await settle(store)
  const ada = await store.findProfile({ userId: 'ada' })
  assert.deepEqual(ada?.audiences, ['big_spenders'])
  const identifies = await syncPayloads(store, destination)
  assert.deepEqual(
    identifies.map((payload) => [payload.type, payload.userId, payload.traits]),
    [['identify', 'ada', { big_spenders: true }]],
  )
}

/** A test on `backend` from `setUp`; the stores are closed after. */
function backendTest(
  backend: Backend,
  name: string,
  body: (opened: Awaited<ReturnType<Backend['open']>>, destination: Destination) => Promise<void>,
): void {
  test(name, async () => {
    const opened = await backend.open()
    try {
      await body(opened, (await setUp(opened.store)).destination)
    } finally {
      await opened.cleanup()
    }
  })
}

for (const backend of backends) {
  describe(`a computation created while calls are consumed (${backend.name})`, () => {
    backendTest(
      backend,
      'a batch planned before the computation was committed is planned again',
      async ({ store, beside }, destination) => {
        // The batch reads the computations (none yet), then the audience is created and committed
        // (its backfill finds no profile: ada's is the batch's to create), then the batch applies.
        const computations: ComputationsSql = {
          ...beside.computations,
          list: async () => {
            const rows = await beside.computations.list()
            assert.ok(await createAudience(store, destination))
            return rows
          },
        }
        const consumed = await consumeMessages(beside.profiles, computations, 500, Date.now())
        assert.equal(consumed, 0, 'the batch planned before the audience is not applied')
        await drain(store)
        await assertEvaluated(store, destination)
      },
    )
  })

  describe(`a computation created while profiles are evaluated (${backend.name})`, () => {
    backendTest(
      backend,
      'an evaluation that found the queue empty before the computation existed does not mark it live',
      async ({ store, beside }, destination) => {
        await settle(store)
        // The evaluation reads the queue (empty), then the audience is created with its backfill
        // queued (ada), then the evaluation reads the computations: the audience, still computing.
        let audienceId = ''
        const computations: ComputationsSql = {
          ...beside.computations,
          dirty: async (limit) => {
            const rows = await beside.computations.dirty(limit)
            const created = await createAudience(store, destination)
            assert.ok(created)
            audienceId = created.id
            return rows
          },
        }
        const destinations = () => store.listDestinations()
        const result = await evaluateQueued({ ...beside, computations, destinations }, 500, Date.now())
        assert.equal(result.evaluated, 0)
        assert.equal(
          (await store.getAudience(audienceId))?.status,
          'computing',
          'live while its backfill is still queued',
        )
        await assertEvaluated(store, destination)
        assert.equal((await store.getAudience(audienceId))?.status, 'live')
      },
    )
  })
}

describe('a computation created while calls are consumed (postgres, waiting on the cursor)', () => {
  test('the batch that waits behind the computation for the cursor is planned again', async () => {
    const { schema, drop } = await freshSchema()
    const store = await openPgStore(schema)
    const clients: pg.Client[] = []
    const connect = async () => {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
      clients.push(client)
      await client.connect()
      await client.query(`SET search_path TO ${schema}`)
      return client
    }
    try {
      const { destination } = await setUp(store)
      const [gate, observer] = [await connect(), await connect()]
      const gatePid = await backendPid(gate)
      await gate.query('BEGIN')
      await gate.query('UPDATE profile_cursor SET version = version')
      // 1. The audience is inserted; its backfill queues for the cursor behind the gate.
      const creating = createAudience(store, destination)
      const [creatorPid] = await pollUntil(
        'the audience to wait for the cursor',
        () => waitersFor(observer, gatePid),
        (pids) => pids.length === 1,
      )
      // 2. A batch is planned (the audience is not committed: it reads no computation) and queues for
      // the cursor behind the audience.
      const consuming = store.consumeIntoProfiles()
      await pollUntil(
        'the batch to wait for the cursor behind the audience',
        () => waitersFor(observer, creatorPid!),
        (pids) => pids.length === 1,
      )
      // 3. The gate lets go: the audience commits first, then the batch applies (or must not).
      await gate.query('COMMIT')
      assert.ok(await creating)
      await consuming
      await drain(store)
      await assertEvaluated(store, destination)
    } finally {
      for (const client of clients) await client.end()
      await store.close()
      await drop()
    }
  })
})
