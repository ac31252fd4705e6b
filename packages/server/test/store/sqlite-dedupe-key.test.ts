// SQLite looks duplicates up by a 53-bit hash of (source, messageId) (store/sqlite/dedupe-key.ts,
// migration 007). A hash is not unique: these tests make two ids really collide and check that neither
// is taken for the other, and that a file written before the key existed still drops its duplicates.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { test } from 'node:test'
import { databasePath } from '../../src/store/sqlite/database.ts'
import { dedupeKey } from '../../src/store/sqlite/dedupe-key.ts'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import { ThreadedSqliteStore } from '../../src/store/sqlite/threaded-store.ts'
import type { Store } from '../../src/store/store.ts'
import { message } from './contract.ts'

async function withDataDir(work: (dataDir: string) => Promise<void>): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-dedupe-key-'))
  try {
    await work(dataDir)
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
}

async function opened(create: () => Store, work: (store: Store) => Promise<void>): Promise<void> {
  const store = create()
  try {
    await store.migrate()
    await work(store)
  } finally {
    await store.close()
  }
}

/** Two messageIds of one source with the same dedupe key, found by trying suffixes. */
function collidingIds(sourceId: string): [string, string] {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
  const seen = new Map<number, string>()
  for (const a of alphabet) {
    for (const b of alphabet) {
      for (const c of alphabet) {
        const id = `order-${a}${b}${c}`
        const key = dedupeKey(sourceId, id)
        const earlier = seen.get(key)
        if (earlier !== undefined) return [earlier, id]
        seen.set(key, id)
      }
    }
  }
  throw new Error('no colliding pair among the ids tried')
}

for (const variant of [
  { name: 'in-thread', create: (dataDir: string) => new SqliteStore({ dataDir, synchronous: 'NORMAL' }) },
  {
    name: 'on its worker thread',
    create: (dataDir: string) => new ThreadedSqliteStore({ dataDir, synchronous: 'NORMAL' }),
  },
]) {
  test(`sqlite (${variant.name}): ids whose dedupe keys collide are both stored and found`, async () => {
    await withDataDir(async (dataDir) => {
      await opened(
        () => variant.create(dataDir),
        async (store) => {
          const source = await store.createSource({ name: 'S', enabled: true })
          const [first, second] = collidingIds(source.id)
          assert.notEqual(first, second)
          assert.equal(dedupeKey(source.id, first), dedupeKey(source.id, second))
          assert.deepEqual((await store.ingest([message(source, first)])).stored, [true])
          // The same key, another id: not a duplicate, in a later commit and in the same one.
          assert.deepEqual((await store.ingest([message(source, second)])).stored, [true])
          assert.deepEqual((await store.ingest([message(source, first), message(source, second)])).stored, [
            false,
            false,
          ])
          assert.equal((await store.getMessage(source.id, first))?.messageId, first)
          assert.equal((await store.getMessage(source.id, second))?.messageId, second)
          assert.equal(await store.countMessages(source.id), 2)
        },
      )
    })
  })
}

test('sqlite: messages written without a dedupe key are found and deduplicated by their text', async () => {
  await withDataDir(async (dataDir) => {
    const create = () => new SqliteStore({ dataDir, synchronous: 'NORMAL' })
    let sourceId = ''
    await opened(create, async (store) => {
      sourceId = (await store.createSource({ name: 'S', enabled: true })).id
    })
    // Sluice's own messages (computed-trait syncs, deletion notices) are inserted without a key.
    const db = new DatabaseSync(databasePath(dataDir))
    db.prepare(
      "INSERT INTO messages (source_id, message_id, type, received_at, payload) VALUES (?, 'written', 'identify', ?, '{}')",
    ).run(sourceId, Date.now())
    db.close()
    await opened(create, async (store) => {
      const source = await store.getSource(sourceId)
      assert.ok(source)
      assert.equal((await store.getMessage(sourceId, 'written'))?.type, 'identify')
      const { stored } = await store.ingest([message(source, 'written'), message(source, 'new')])
      assert.deepEqual(stored, [false, true])
      assert.equal((await store.getMessage(sourceId, 'new'))?.type, 'track')
    })
  })
})

test('sqlite: messages stored before the dedupe key existed are still found and deduplicated', async () => {
  await withDataDir(async (dataDir) => {
    const create = () => new SqliteStore({ dataDir, synchronous: 'NORMAL' })
    let sourceId = ''
    await opened(create, async (store) => {
      const source = await store.createSource({ name: 'S', enabled: true })
      sourceId = source.id
      await store.ingest([message(source, 'before-1'), message(source, 'before-2')])
    })
    // Back to the schema before migration 007: no key column, the index over the text columns.
    const db = new DatabaseSync(databasePath(dataDir))
    db.exec(`DROP INDEX messages_by_dedupe_key;
      DROP INDEX messages_unkeyed;
      ALTER TABLE messages DROP COLUMN dedupe_key;
      CREATE INDEX messages_by_source_message ON messages (source_id, message_id, received_at);
      DELETE FROM schema_migrations WHERE version = 7;`)
    db.close()
    await opened(create, async (store) => {
      const source = await store.getSource(sourceId)
      assert.ok(source)
      const { stored } = await store.ingest([message(source, 'before-1'), message(source, 'after')])
      assert.deepEqual(stored, [false, true])
      assert.equal((await store.getMessage(sourceId, 'before-2'))?.messageId, 'before-2')
    })
  })
})
