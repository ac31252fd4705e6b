// Deadlocks on PostgreSQL: a transaction PostgreSQL rolls back to break a deadlock is run again, so the
// caller sees it succeed. The deadlock is provoked on purpose, with a second connection taking the same
// locks in the other order.
//
// Which side PostgreSQL rolls back is made certain, not left to timing: a backend checks for a deadlock
// once, deadlock_timeout (1 s) after it starts to wait, and the one that finds the cycle is rolled back.
// So the erasure must be the last to wait, after the cycle is complete. A third connection ("gate")
// holds the profile cursor at the start, so that the erasure and then the other connection queue for
// it, in that order; once the gate lets go, the erasure takes the cursor and waits for the profile's
// row, which the other connection holds while it waits for the cursor: the erasure finds the cycle.
// The other connection's own check is 60 s away.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import type { PostgresStore } from '../../src/store/postgres/postgres-store.ts'
import { backendPid, freshSchema, openPgStore, pollUntil, TEST_DATABASE_URL, waitersFor } from './pg.ts'
import { call, drain } from './profile-backends.ts'

describe('postgres deadlocks', () => {
  let schema: string
  let drop: () => Promise<void>
  let store: PostgresStore
  let other: pg.Client
  let gate: pg.Client
  let observer: pg.Client

  const connect = async () => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
    await client.connect()
    await client.query(`SET search_path TO ${schema}`)
    return client
  }

  before(async () => {
    ;({ schema, drop } = await freshSchema())
    store = await openPgStore(schema)
    other = await connect()
    await other.query("SET deadlock_timeout = '60s'")
    gate = await connect()
    observer = await connect()
  })
  after(async () => {
    for (const client of [other, gate, observer]) await client?.end()
    await store.close()
    await drop()
  })

  test('an erasure rolled back for a deadlock is run again and succeeds', async () => {
    const source = await store.createSource({ name: 'web', enabled: true })
    await store.ingest([call(source, { userId: 'gone', event: 'E' })])
    await drain(store)
    const profile = (await store.findProfile({ userId: 'gone' }))!
    const [gatePid, otherPid] = [await backendPid(gate), await backendPid(other)]
    await gate.query('BEGIN')
    await gate.query('UPDATE profile_cursor SET version = version')
    await other.query('BEGIN')
    await other.query('UPDATE profiles SET merged_in = merged_in WHERE id = $1', [profile.id])
    let outcome: string | undefined
    const erasing = store.eraseProfilesOfUsers(['gone'])
    erasing.then(
      (erased) => {
        outcome = `erased ${erased}`
      },
      (error: unknown) => {
        outcome = `failed: ${(error as Error).message}`
      },
    )
    // 1. The erasure locks the cursor first: it queues behind the gate.
    const [erasurePid] = await pollUntil(
      'the erasure to wait for the cursor',
      async () => (outcome === undefined ? waitersFor(observer, gatePid) : [-1]),
      (pids) => pids.length > 0,
    )
    assert.ok(erasurePid !== -1, `the erasure waits for the cursor the gate holds; it ended: ${outcome}`)
    // 2. The other connection asks for the cursor too, and queues behind the erasure.
    const otherLocked = other.query('UPDATE profile_cursor SET version = version')
    await pollUntil(
      'the other connection to queue for the cursor behind the erasure',
      () => waitersFor(observer, erasurePid!),
      (pids) => pids.includes(otherPid),
    )
    // 3. The gate lets go: the erasure takes the cursor and waits for the profile's row, the cycle is
    // complete, and the erasure, the last to wait, is rolled back; the other connection then gets the
    // cursor (it would fail with "deadlock detected" had it been the one rolled back).
    await gate.query('COMMIT')
    await otherLocked
    assert.equal(outcome, undefined, 'the erasure waits for the other connection to commit')
    await other.query('COMMIT')
    // The erasure, run again, succeeds.
    assert.equal(await erasing, 1)
    assert.equal(await store.findProfile({ userId: 'gone' }), null)
  })
})
