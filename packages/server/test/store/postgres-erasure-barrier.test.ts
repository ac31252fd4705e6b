// A deletion request racing a call's commit on PostgreSQL, in the one order that went wrong, made
// certain with another connection rather than left to timing: the call is received, its ingest has read
// the deletion requests (none yet) and waits on a row another transaction holds; the request is made
// and its erasure runs; only then does the call commit. The erasure MUST wait for that commit and erase
// the call, or the call stays stored (and can rebuild the erased user's profile).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import pg from 'pg'
import type { AcceptedMessage } from '../../src/domain/message-store.ts'
import type { Store } from '../../src/store/store.ts'
import { backendPid, freshSchema, openPgStore, pollUntil, TEST_DATABASE_URL, waitersFor } from './pg.ts'

let schema: string
let drop: () => Promise<void>
let ingesting: Store
let erasing: Store

before(async () => {
  ;({ schema, drop } = await freshSchema())
  // Two handles on one schema: the process storing the call, and the one taking the request.
  ingesting = await openPgStore(schema)
  erasing = await openPgStore(schema)
})
after(async () => {
  await ingesting?.close()
  await erasing?.close()
  await drop()
})

function lateCall(sourceId: string, messageId: string, receivedAt: number): AcceptedMessage {
  return {
    sourceId,
    messageId,
    type: 'track',
    receivedAt,
    routeTo: ['webhooks'],
    payloadJson: JSON.stringify({ type: 'track', messageId, userId: 'late', event: 'E' }),
    userId: 'late',
  }
}

test('an erasure waits for a call of its user that is being committed, then erases it', async () => {
  const source = await ingesting.createSource({ name: 'web', enabled: true })
  const destination = await ingesting.createDestination({
    name: 'hook',
    type: 'webhooks',
    enabled: true,
    sourceIds: [source.id],
    settings: { webhooks: [{ url: 'http://127.0.0.1:9/hook', headers: {} }], sharedSecret: null },
  })
  const holder = new pg.Client({ connectionString: TEST_DATABASE_URL })
  const observer = new pg.Client({ connectionString: TEST_DATABASE_URL })
  try {
    await holder.connect()
    await observer.connect()
    await holder.query(`SET search_path TO ${schema}`)
    // Another transaction holds the call's dedupe key, so the ingest waits on it mid-statement, after
    // it has read the deletion requests.
    await holder.query('BEGIN')
    await holder.query('INSERT INTO dedupe_keys (source_id, message_id, received_at) VALUES ($1, $2, 0)', [
      source.id,
      'late-1',
    ])
    const receivedAt = Date.now()
    const stored = ingesting.ingest([lateCall(source.id, 'late-1', receivedAt)])
    const holderPid = await backendPid(holder)
    await pollUntil(
      'the ingest to wait on the held key',
      () => waitersFor(observer, holderPid),
      (waiting) => waiting.length > 0,
    )

    await new Promise((resolve) => setTimeout(resolve, 2))
    const regulation = await erasing.createRegulation({
      type: 'DELETE_ONLY',
      subjectIds: ['late'],
      sourceIds: null,
    })
    assert.ok(regulation.createdAt > receivedAt, 'the request comes after the call was received')
    let erasureDone = false
    const erasure = (async () => {
      let erased = 0
      for (let step = await erasing.eraseNext(100); step !== null; step = await erasing.eraseNext(100))
        erased += step.erased
      erasureDone = true
      return erased
    })()
    // The erasure waits at its barrier for the ingest in flight (without one it would finish now,
    // before the call is committed, and erase nothing).
    await pollUntil(
      'the erasure to wait for the ingest, or to finish',
      async () => {
        const { rows } = await observer.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
        )
        return erasureDone || rows[0]!.n > 0
      },
      Boolean,
    )

    await holder.query('ROLLBACK')
    assert.deepEqual((await stored).stored, [true], 'the call is acknowledged')
    assert.equal(await erasure, 1, 'the erasure erased the call committed after the request')
    assert.equal(await ingesting.getMessage(source.id, 'late-1'), null)
    const claimed = await ingesting.claimDeliveries(destination.id, 100, Date.now(), 60_000)
    assert.deepEqual(
      claimed.map((delivery) => delivery.payload.type),
      [],
      "the call's delivery went with it (and no delete: none of the user's calls was stored when it was made)",
    )
  } finally {
    await holder.end().catch(() => {})
    await observer.end().catch(() => {})
  }
})
