import { join } from 'node:path'
import type { MigrationsSql } from '../../core/migrations.ts'
import type { SqliteDatabase } from '../database.ts'

export const SQLITE_MIGRATIONS_DIR = join(import.meta.dirname, '..', 'migrations')

export function sqliteMigrations(db: SqliteDatabase): MigrationsSql {
  return {
    dir: SQLITE_MIGRATIONS_DIR,
    // The server opens its file from one process only; nothing else migrates it meanwhile.
    exclusive: (work) =>
      work({
        applied() {
          db.exec(
            'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
          )
          const rows = db.sql('SELECT version FROM schema_migrations').all() as { version: number }[]
          return rows.map((row) => row.version)
        },
        apply(migration) {
          db.transaction(() => {
            db.exec(migration.sql)
            db.sql('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
              migration.version,
              migration.name,
              Date.now(),
            )
          })
        },
      }),
  }
}
