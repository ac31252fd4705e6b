// Deadlocks on PostgreSQL: a transaction PostgreSQL rolls back to break a deadlock is run again, so the
// caller sees it succeed. The deadlock is provoked on purpose, with a second connection taking the same
// locks in the other order.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import type { PostgresStore } from '../../src/store/postgres/postgres-store.ts'
import { freshSchema, openPgStore, TEST_DATABASE_URL } from './pg.ts'
import { call, drain } from './profile-backends.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('postgres deadlocks', () => {
  let schema: string
  let drop: () => Promise<void>
  let store: PostgresStore
  let other: pg.Client

  before(async () => {
    ;({ schema, drop } = await freshSchema())
    store = await openPgStore(schema)
    other = new pg.Client({ connectionString: TEST_DATABASE_URL })
    await other.connect()
    await other.query(`SET search_path TO ${schema}`)
    // The store's connection, waiting first, is the one that detects the deadlock and is rolled back.
    await other.query("SET deadlock_timeout = '20s'")
  })
  after(async () => {
    await other.end()
    await store.close()
    await drop()
  })

  test('an erasure rolled back for a deadlock is run again and succeeds', async () => {
    const source = await store.createSource({ name: 'web', enabled: true })
    await store.ingest([call(source, { userId: 'gone', event: 'E' })])
    await drain(store)
    const profile = (await store.findProfile({ userId: 'gone' }))!
    await other.query('BEGIN')
    await other.query('UPDATE profiles SET merged_in = merged_in WHERE id = $1', [profile.id])
    // The erasure locks the cursor, then waits for the profile's row.
    const erasing = store.eraseProfilesOfUsers(['gone'])
    await sleep(300)
    // The other connection now waits for the cursor: a deadlock, which PostgreSQL breaks by rolling
    // the erasure back (after its deadlock_timeout, 1 s by default).
    await other.query('UPDATE profile_cursor SET version = version')
    await other.query('COMMIT')
    assert.equal(await erasing, 1)
    assert.equal(await store.findProfile({ userId: 'gone' }), null)
  })
})
