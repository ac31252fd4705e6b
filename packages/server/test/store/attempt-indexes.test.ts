/**
 * Upgrading a store that holds attempts to the attempts indexed by destination and time (SQLite
 * migration 017, PostgreSQL 019; on SQLite the table is also rebuilt without AUTOINCREMENT): every
 * attempt is kept, in order, and the reads made from them (a delivery's attempts, latency, recent
 * attempts, per-minute figures) answer as before; attempts recorded afterwards come after the old ones.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { describe, test } from 'node:test'
import { databasePath } from '../../src/store/sqlite/database.ts'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import type { Store } from '../../src/store/store.ts'
import { attempt, message } from './contract.ts'
import { freshSchema, openPgStore, withAdmin } from './pg.ts'

interface Backend {
  name: string
  /** A migrated store; `downgradeAndReopen` puts the attempts back as they were and opens it again. */
  open(): Promise<{
    store: Store
    downgradeAndReopen(): Promise<Store>
    attemptIndexes(): Promise<string[]>
    destroy(): Promise<void>
  }>
}

// The attempts table and its indexes as SQLite migrations 001 and 003 made them.
const SQLITE_BEFORE = `
  CREATE TABLE attempts_before (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id INTEGER NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
    destination_id TEXT NOT NULL, attempted_at INTEGER NOT NULL, url TEXT NOT NULL, status_code INTEGER,
    error_kind TEXT, error_text TEXT, latency_ms INTEGER NOT NULL, response_excerpt TEXT);
  INSERT INTO attempts_before SELECT * FROM attempts;
  DROP TABLE attempts;
  ALTER TABLE attempts_before RENAME TO attempts;
  CREATE INDEX attempts_by_delivery ON attempts (delivery_id);
  CREATE INDEX attempts_by_destination ON attempts (destination_id, id);
  CREATE INDEX attempts_by_time ON attempts (attempted_at);
  DELETE FROM schema_migrations WHERE version = 17;`

const backends: Backend[] = [
  {
    name: 'SQLite',
    open: async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'sluice-attempt-indexes-'))
      const open = async () => {
        const store = new SqliteStore({ dataDir, synchronous: 'NORMAL' })
        await store.migrate()
        return store
      }
      const read = <T>(work: (db: DatabaseSync) => T): T => {
        const db = new DatabaseSync(databasePath(dataDir))
        try {
          return work(db)
        } finally {
          db.close()
        }
      }
      return {
        store: await open(),
        downgradeAndReopen: async () => {
          read((db) => {
            db.exec(SQLITE_BEFORE)
            const { sql } = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'attempts'").get() as {
              sql: string
            }
            assert.match(sql, /AUTOINCREMENT/)
          })
          return open()
        },
        attemptIndexes: async () =>
          read((db) => {
            const { sql } = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'attempts'").get() as {
              sql: string
            }
            assert.doesNotMatch(sql, /AUTOINCREMENT/)
            assert.equal(db.prepare("SELECT 1 FROM sqlite_sequence WHERE name = 'attempts'").get(), undefined)
            return (
              db
                .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'attempts'")
                .all() as {
                name: string
              }[]
            )
              .map((row) => row.name)
              .sort()
          }),
        destroy: () => rm(dataDir, { recursive: true, force: true }),
      }
    },
  },
  {
    name: 'PostgreSQL',
    open: async () => {
      const { schema, drop } = await freshSchema()
      return {
        store: await openPgStore(schema),
        downgradeAndReopen: async () => {
          await withAdmin((client) =>
            client.query(
              `DROP INDEX ${schema}.attempts_by_destination_time;
               CREATE INDEX attempts_by_destination ON ${schema}.attempts (destination_id, id);
               CREATE INDEX attempts_by_time ON ${schema}.attempts (attempted_at);
               DELETE FROM ${schema}.schema_migrations WHERE version = 19`,
            ),
          )
          return openPgStore(schema)
        },
        attemptIndexes: () =>
          withAdmin(async (client) =>
            (
              await client.query<{ indexname: string }>(
                "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'attempts'",
                [schema],
              )
            ).rows
              .map((row) => row.indexname)
              .sort(),
          ),
        destroy: drop,
      }
    },
  },
]

const MINUTE = 60_000

for (const backend of backends) {
  describe(`attempts by destination and time (${backend.name})`, () => {
    test('upgrading keeps every attempt in order, and the reads made from them', async () => {
      const { store, downgradeAndReopen, attemptIndexes, destroy } = await backend.open()
      let reopened: Store | null = null
      try {
        const source = await store.createSource({ name: 'A', enabled: true })
        const destination = await store.createDestination({
          name: 'Hooks',
          type: 'webhooks',
          enabled: true,
          sourceIds: [source.id],
          settings: { webhooks: [{ url: 'https://example.com/hook', headers: {} }], sharedSecret: 's' },
        })
        await store.ingest([message(source, 'm-1'), message(source, 'm-2'), message(source, 'm-3')])
        const t0 = Math.floor(Date.now() / MINUTE) * MINUTE - 10 * MINUTE
        const [a, b, c] = await store.claimDeliveries(destination.id, 3, Date.now(), 30_000)
        assert.ok(a && b && c)
        await store.recordOutcomes([
          {
            deliveryId: a.id,
            attempts: [
              attempt({ attemptedAt: t0 + 1_000, statusCode: 503, errorKind: 'http', latencyMs: 40 }),
              attempt({ attemptedAt: t0 + 2_000, url: 'https://b.example/', latencyMs: 7 }),
            ],
            status: 'delivered',
            deadLettered: false,
            nextAttemptAt: null,
            firstAttemptAt: t0 + 1_000,
            closedUrls: [],
          },
          {
            deliveryId: b.id,
            attempts: [
              attempt({ attemptedAt: t0 + MINUTE, statusCode: null, errorKind: 'timeout', latencyMs: 900 }),
            ],
            status: 'retrying',
            deadLettered: false,
            nextAttemptAt: t0,
            firstAttemptAt: t0 + MINUTE,
            closedUrls: [],
          },
          {
            deliveryId: c.id,
            attempts: [attempt({ attemptedAt: t0 + 2 * MINUTE, latencyMs: 3 })],
            status: 'delivered',
            deadLettered: false,
            nextAttemptAt: null,
            firstAttemptAt: t0 + 2 * MINUTE,
            closedUrls: [],
          },
        ])
        const reads = async (handle: Store) => ({
          deliveries: await handle.listDeliveries(destination.id, { limit: 10 }),
          stats: await handle.deliveryStats(destination.id),
          recent: await handle.recentAttempts(destination.id, 10),
          minutes: await handle.deliveryMinutes(destination.id, t0, t0 + 5 * MINUTE),
        })
        const before = await reads(store)
        assert.equal(before.deliveries.flatMap((delivery) => delivery.attempts).length, 4)
        assert.equal(before.minutes.length, 3)
        await store.close()

        reopened = await downgradeAndReopen()
        assert.deepEqual(
          await attemptIndexes(),
          ['attempts_by_delivery', 'attempts_by_destination_time']
            .concat(backend.name === 'PostgreSQL' ? ['attempts_pkey'] : [])
            .sort(),
        )
        assert.deepEqual(await reads(reopened), before)

        // An attempt recorded after the upgrade comes after the delivery's earlier one.
        const [again] = await reopened.claimDeliveries(destination.id, 1, Date.now(), 30_000)
        assert.equal(again?.id, b.id)
        await reopened.recordOutcomes([
          {
            deliveryId: b.id,
            attempts: [attempt({ attemptedAt: t0 + 3 * MINUTE, latencyMs: 5 })],
            status: 'delivered',
            deadLettered: false,
            nextAttemptAt: null,
            firstAttemptAt: t0 + MINUTE,
            closedUrls: [],
          },
        ])
        const retried = (await reopened.listDeliveries(destination.id, { limit: 10 })).find(
          (delivery) => delivery.id === b.id,
        )
        assert.deepEqual(
          retried?.attempts.map((row) => row.attemptedAt),
          [t0 + MINUTE, t0 + 3 * MINUTE],
        )
        // Rolled up, the minutes read the same as they did live.
        const live = await reopened.deliveryMinutes(destination.id, t0, t0 + 5 * MINUTE)
        assert.equal(live.length, 4)
        assert.equal(await reopened.rollUpDeliveries(Date.now()), 4)
        assert.deepEqual(await reopened.deliveryMinutes(destination.id, t0, t0 + 5 * MINUTE), live)
        assert.equal((await reopened.recentAttempts(destination.id, 1))[0]?.attemptedAt, t0 + 3 * MINUTE)
      } finally {
        await reopened?.close()
        await destroy()
      }
    })
  })
}
