// Two processes evaluating one profile on PostgreSQL, in the one order that can send a value twice:
// process B reads the profile's queue entry and what was last sent (nothing), and decides to send
// `true`; process A evaluates the same entry, sends `true` and removes the entry; a new call then
// queues the profile again; only then does B commit. B's evaluation is stale (it read a queue entry
// that is gone, and a `computed_sent` from before A's commit) and MUST write nothing, although the
// profile is queued again. The order is made certain, not left to timing: B's commit waits on a gate.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { evaluateQueued } from '../../src/profile/evaluation.ts'
import { SILENT_LOGGER } from '../../src/store/postgres/connection.ts'
import { PostgresDatabase } from '../../src/store/postgres/database.ts'
import { postgresComputations } from '../../src/store/postgres/sql/computations.ts'
import { postgresProfiles } from '../../src/store/postgres/sql/profiles.ts'
import type { Store } from '../../src/store/store.ts'
import type { EvaluationWrites } from '../../src/store/tables/computations.ts'
import { freshSchema, openPgStore, TEST_DATABASE_URL, withAdmin } from './pg.ts'
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
