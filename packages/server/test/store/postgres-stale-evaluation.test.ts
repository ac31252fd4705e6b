// Evaluation racing other processes on PostgreSQL, each in the one order that goes wrong, made certain
// rather than left to timing (a gate, or another connection holding its transaction open):
// - process B reads a profile's queue entry and what was last sent (nothing), and decides to send
//   `true`; process A evaluates the same entry, sends `true` and removes the entry; a new call then
//   queues the profile again; only then does B commit. B's evaluation is stale and MUST write nothing,
//   although the profile is queued again;
// - an evaluation that finds the queue empty marks a computing computation live, while another process
//   commits a change that queued its backfill: the computation MUST stay computing.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { evaluateQueued } from '../../src/profile/evaluation.ts'
import { SILENT_LOGGER } from '../../src/store/postgres/connection.ts'
import { PostgresDatabase } from '../../src/store/postgres/database.ts'
import { postgresComputations } from '../../src/store/postgres/sql/computations.ts'
import { postgresProfiles } from '../../src/store/postgres/sql/profiles.ts'
import type { Store } from '../../src/store/store.ts'
import type { EvaluationWrites } from '../../src/store/tables/computations.ts'
import { freshSchema, openPgStore, TEST_DATABASE_URL, whileAnotherCommits, withAdmin } from './pg.ts'
import { call, drain, settle, sourceAndHook, syncPayloads } from './profile-backends.ts'

let schema: string
let drop: () => Promise<void>
let store: Store
let database: PostgresDatabase

before(async () => {
  ;({ schema, drop } = await freshSchema())
  store = await openPgStore(schema)
  database = new PostgresDatabase({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 }, SILENT_LOGGER)
})
after(async () => {
  await database?.end()
  await store?.close()
  await drop()
})

test('an evaluation that read a profile another process has evaluated since writes nothing, even once a new call queued it again', async () => {
  const { source, destination } = await sourceAndHook(store)
  await store.createAudience({
    name: 'Buyers',
    key: 'buyers',
    definition: { event: 'Order Completed' },
    destinationIds: [destination.id],
    includeAnonymous: false,
  })
  await settle(store)
  await store.ingest([call(source, { userId: 'buyer', event: 'Order Completed' })])
  await drain(store)

  // Process B: the real evaluation over its own connections, whose commit waits until it is let go.
  const computations = postgresComputations(database)
  let planned!: () => void
  const reachedCommit = new Promise<void>((resolve) => {
    planned = resolve
  })
  let letGo!: () => void
  const gate = new Promise<void>((resolve) => {
    letGo = resolve
  })
  let plannedMessages = -1
  const evaluatingB = evaluateQueued(
    {
      profiles: postgresProfiles(database),
      computations: {
        ...computations,
        apply: async (writes: EvaluationWrites) => {
          plannedMessages = writes.messages.length
          planned()
          await gate
          return computations.apply(writes)
        },
      },
      destinations: () => store.listDestinations(),
    },
    100,
    Date.now(),
  )
  await reachedCommit
  assert.equal(plannedMessages, 1, 'B read nothing sent yet and plans the `true`')

  // Process A evaluates the same entry and sends `true`; then a new call queues the profile again.
  const byA = await store.evaluateComputations(100)
  assert.equal(byA.deliveriesCreated, 1)
  await store.ingest([call(source, { userId: 'buyer', event: 'Order Completed' })])
  await drain(store)

  letGo()
  const byB = await evaluatingB
  assert.equal(byB.deliveriesCreated, 0, 'B finds its evaluation stale and writes nothing')
  await settle(store)
  const payloads = await syncPayloads(store, destination)
  assert.deepEqual(
    payloads.map((payload) => [payload.userId, payload.traits]),
    [['buyer', { buyers: true }]],
    'the member gets exactly one true',
  )
})

test('a database queued before the upgrade: new marks take numbers above every entry already queued', async () => {
  const inSchema = (sql: string) =>
    withAdmin(async (client) => {
      await client.query(`SET search_path TO ${schema}`)
      return (await client.query<{ profile_id: string; seq: string }>(sql)).rows
    })
  const source = await store.createSource({ name: 'before the upgrade', enabled: true })
  await store.createAudience({
    name: 'Viewers',
    key: 'viewers',
    definition: { event: 'Viewed' },
    destinationIds: [],
    includeAnonymous: false,
  })
  await settle(store)
  await inSchema(`ALTER TABLE profile_dirty ALTER COLUMN seq DROP DEFAULT;
    DROP SEQUENCE profile_dirty_seq;
    DELETE FROM schema_migrations WHERE version = 21;
    INSERT INTO profile_dirty (profile_id, seq) VALUES ('queued-before', 7)`)
  const upgraded = await openPgStore(schema)
  try {
    await upgraded.ingest([call(source, { userId: 'new-after-upgrade', event: 'Viewed' })])
    await drain(upgraded)
    const rows = await inSchema('SELECT profile_id, seq FROM profile_dirty ORDER BY seq')
    assert.deepEqual(
      rows.map((row) => [row.profile_id === 'queued-before', Number(row.seq)]),
      [
        [true, 7],
        [false, 8],
      ],
    )
  } finally {
    await upgraded.close()
  }
})

test('a change that queues a backfill while an evaluation finds the queue empty leaves it computing', async () => {
  // A schema of its own: the queue must be empty. Another connection stands for the process making the
  // change, holding its transaction open while the evaluation waits on the computation's row.
  const own = await freshSchema()
  const ownStore = await openPgStore(own.schema)
  try {
    const created = (await ownStore.createComputedTrait({
      name: 'Visits',
      key: 'visits',
      kind: 'count',
      event: 'Visit',
      property: null,
      where: [],
      withinDays: null,
      destinationIds: [],
    }))!
    assert.equal(created.status, 'computing', 'nothing to backfill yet, not live until evaluated')
    await whileAnotherCommits(
      own.schema,
      [
        ['UPDATE computations SET updated_at = updated_at + 1 WHERE id = $1', [created.id]],
        ["INSERT INTO profile_dirty (profile_id) VALUES ('prf_queued_by_the_change')"],
      ],
      () => ownStore.evaluateComputations(100),
    )
    assert.equal(
      (await ownStore.getComputedTrait(created.id))?.status,
      'computing',
      'a profile is queued: not live until it is evaluated',
    )
  } finally {
    await ownStore.close()
    await own.drop()
  }
})
