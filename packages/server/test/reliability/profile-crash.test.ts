// A crash between evaluation and delivery loses nothing and sends nothing twice: a process evaluating
// queued profiles is killed (SIGKILL) while its transaction — new values, last-sent state, identify
// messages and their deliveries — is held up, and a later evaluation then enqueues every change exactly
// once. On PostgreSQL the child is held by a row lock on its queue entries and killed once PostgreSQL
// shows it waiting on that lock; on SQLite it is held by another connection's write lock.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { describe, test } from 'node:test'
import pg from 'pg'
import type { Destination } from '../../src/domain/destinations.ts'
import { databasePath } from '../../src/store/sqlite/database.ts'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import type { Store } from '../../src/store/store.ts'
import { freshSchema, openPgStore, TEST_DATABASE_URL, withAdmin } from '../store/pg.ts'
import { call, drain, sourceAndHook } from '../store/profile-backends.ts'
import { until } from './helpers.ts'

const USERS = 40

/** A computed trait with a destination, and every user's calls consumed: USERS profiles queued. */
async function prepare(store: Store): Promise<Destination> {
  const { source, destination } = await sourceAndHook(store)
  await store.createComputedTrait({
    name: 'Orders',
    key: 'orders',
    kind: 'count',
    event: 'Order Completed',
    property: null,
    where: [],
    withinDays: null,
    destinationIds: [destination.id],
  })
  await store.ingest(
    Array.from({ length: USERS * 2 }, (_, i) =>
      call(source, { userId: `u${i % USERS}`, event: 'Order Completed' }),
    ),
  )
  await drain(store)
  return destination
}

function startChild(args: string[]) {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'evaluate-child.ts'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  return { child, output: () => output, exited: once(child, 'exit') }
}

async function assertEveryChangeOnce(store: Store, destination: Destination): Promise<void> {
  let created = 0
  for (;;) {
    const { evaluated, deliveriesCreated } = await store.evaluateComputations(500)
    created += deliveriesCreated
    if (evaluated === 0) break
  }
  assert.equal(created, USERS)
  assert.equal(await store.countDeliveries({ destinationId: destination.id }), USERS)
  assert.equal((await store.evaluateComputations(500)).evaluated, 0)
}

describe('crash between evaluation and delivery', () => {
  test('postgres: killed while its commit waits on a lock', async () => {
    const { schema, drop } = await freshSchema()
    const store = await openPgStore(schema)
    const locker = new pg.Client({ connectionString: TEST_DATABASE_URL })
    try {
      const destination = await prepare(store)
      await locker.connect()
      await locker.query(`SET search_path = ${schema}`)
      await locker.query('BEGIN')
      await locker.query('SELECT * FROM profile_dirty FOR UPDATE')
      const { child, output, exited } = startChild(['postgres', TEST_DATABASE_URL, schema])
      // Asked outside the locker's transaction, which would see one cached snapshot of the activity.
      const waiting = () =>
        withAdmin(
          async (admin) =>
            (
              await admin.query(
                "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'sluice-evaluate-child' AND wait_event_type = 'Lock'",
              )
            ).rows[0].n as number,
        )
      await until('the child waiting on the queue rows', waiting, (n) => n === 1, 20_000)
      child.kill('SIGKILL')
      await exited
      assert.doesNotMatch(output(), /committed/)
      await locker.query('ROLLBACK')
      assert.equal(await store.countDeliveries({ destinationId: destination.id }), 0, 'nothing committed')
      await assertEveryChangeOnce(store, destination)
    } finally {
      await locker.end().catch(() => {})
      await store.close()
      await drop()
    }
  })

  test('sqlite: killed while another connection holds the write lock', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'sluice-crash-'))
    const store = new SqliteStore({ dataDir, synchronous: 'FULL' })
    await store.migrate()
    const locker = new DatabaseSync(databasePath(dataDir))
    try {
      const destination = await prepare(store)
      locker.exec('BEGIN IMMEDIATE')
      const { child, output, exited } = startChild(['sqlite', dataDir])
      await until('the child evaluating', output, (text) => text.includes('evaluating'), 20_000)
      child.kill('SIGKILL')
      await exited
      assert.doesNotMatch(output(), /committed/)
      locker.exec('ROLLBACK')
      assert.equal(await store.countDeliveries({ destinationId: destination.id }), 0, 'nothing committed')
      await assertEveryChangeOnce(store, destination)
    } finally {
      locker.close()
      await store.close()
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})
