// SQLite's due index holds deliveries in no batch only (migration 019): a file written before it, with
// a batch in flight, migrates and goes on as before (its members are no candidates, still waiting in
// the backlog, and their batch comes back once its lease runs out).
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { databasePath } from '../../src/store/sqlite/database.ts'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import { message } from './contract.ts'

test('a file from before the unbatched due index migrates with its batch in flight', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-unbatched-due-'))
  try {
    let now = 0
    let destinationId = ''
    let memberIds: number[] = []
    let batchId = 0
    const first = new SqliteStore({ dataDir, synchronous: 'NORMAL' })
    try {
      await first.migrate()
      const source = await first.createSource({ name: 'Old', enabled: true })
      const destination = await first.createDestination({
        name: 'Batched',
        type: 'webhooks',
        enabled: true,
        sourceIds: [source.id],
        settings: {
          webhooks: [{ url: 'https://example.com/hook', headers: {} }],
          sharedSecret: null,
          batching: { maxEvents: 10, maxBytes: 512_000, maxWaitMs: 0 },
        },
      })
      destinationId = destination.id
      await first.ingest(Array.from({ length: 4 }, (_, i) => message(source, `old-${i}`)))
      now = Date.now() + 1
      const ids = (await first.batchCandidates(destinationId, 10, now)).map((c) => c.id)
      assert.equal(ids.length, 4, 'candidates')
      memberIds = ids.slice(0, 3)
      const [batch] = await first.formClaimedBatches(destinationId, [memberIds], now, 30_000)
      batchId = batch!.id
    } finally {
      await first.close()
    }
    // As the previous version left it: the due index over every waiting delivery, migration 019 not applied.
    const raw = new DatabaseSync(databasePath(dataDir))
    raw.exec(`DROP INDEX deliveries_due;
      CREATE INDEX deliveries_due ON deliveries (destination_id, next_attempt_at) WHERE status IN ('pending', 'retrying');
      DELETE FROM schema_migrations WHERE version = 19;`)
    raw.close()

    const store = new SqliteStore({ dataDir, synchronous: 'NORMAL' })
    try {
      await store.migrate()
      const raw = new DatabaseSync(databasePath(dataDir), { readOnly: true })
      const { sql } = raw.prepare("SELECT sql FROM sqlite_master WHERE name = 'deliveries_due'").get() as {
        sql: string
      }
      raw.close()
      assert.match(sql, /batch_id IS NULL/)
      assert.equal((await store.batchCandidates(destinationId, 10, now)).length, 1)
      assert.equal((await store.deliveryBacklog())[0]?.pending, 4)
      const [again] = await store.claimBatches(destinationId, 10, now + 30_001, 30_000)
      assert.equal(again?.id, batchId)
      assert.deepEqual(
        again?.members.map((member) => member.id),
        memberIds,
      )
    } finally {
      await store.close()
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
})
