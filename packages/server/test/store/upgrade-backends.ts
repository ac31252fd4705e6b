/**
 * Both stores for upgrade tests: a migrated store, and a way to put its database back as an older
 * version left it (SQL run directly on the file or schema) and open it again, which re-applies the
 * migrations undone.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { databasePath } from '../../src/store/sqlite/database.ts'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import type { Store } from '../../src/store/store.ts'
import { freshSchema, openPgStore, withAdmin } from './pg.ts'

/** A table's name as the SQL given to `downgradeAndReopen` must write it (PostgreSQL: schema-qualified). */
export type TableName = (table: string) => string

export interface UpgradeBackend {
  name: string
  open(): Promise<{
    store: Store
    /** Runs `sql(table)` on the database, then opens the store again (it migrates). */
    downgradeAndReopen(sql: (table: TableName) => string): Promise<Store>
    destroy(): Promise<void>
  }>
}

/** SQLite (a fresh data dir named after `prefix`) and PostgreSQL (a fresh schema). */
export function upgradeBackends(prefix: string): UpgradeBackend[] {
  return [
    {
      name: 'SQLite',
      open: async () => {
        const dataDir = await mkdtemp(join(tmpdir(), `${prefix}-`))
        const open = async () => {
          const store = new SqliteStore({ dataDir, synchronous: 'NORMAL' })
          await store.migrate()
          return store
        }
        return {
          store: await open(),
          downgradeAndReopen: async (sql) => {
            const db = new DatabaseSync(databasePath(dataDir))
            try {
              db.exec(sql((table) => table))
            } finally {
              db.close()
            }
            return open()
          },
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
          downgradeAndReopen: async (sql) => {
            await withAdmin((client) => client.query(sql((table) => `${schema}.${table}`)))
            return openPgStore(schema)
          },
          destroy: drop,
        }
      },
    },
  ]
}
