/**
 * Numbered migrations (`migrations/NNN_name.sql` in each backend's folder), applied in order, each in its
 * own transaction together with its `schema_migrations` row, so a migration cut off half-way is rolled
 * back and simply applied again at the next start.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Awaitable } from '../tables/sql-types.ts'

export interface MigrationsSql {
  /** The folder of this backend's `NNN_name.sql` files. */
  readonly dir: string
  /**
   * Runs `work` alone: no other process migrates the same database meanwhile (PostgreSQL takes an
   * advisory lock; SQLite has a single writer).
   */
  exclusive(work: (statements: MigrationStatements) => Promise<void>): Promise<void>
}

export interface Migration {
  version: number
  /** The file name. */
  name: string
  sql: string
}

export interface MigrationStatements {
  /** Versions applied so far (creates the bookkeeping table when missing). */
  applied(): Awaitable<number[]>
  /** Runs the migration and records it, in one transaction. */
  apply(migration: Migration): Awaitable<void>
}

export function migrationFiles(dir: string): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{3}_.+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file,
      sql: readFileSync(join(dir, file), 'utf8'),
    }))
}

/** Applies the pending migrations. Safe to run on every start, by several processes at once. */
export async function applyMigrations(migrations: MigrationsSql, storeName: string): Promise<void> {
  await migrations.exclusive(async (statements) => {
    const applied = new Set(await statements.applied())
    for (const migration of migrationFiles(migrations.dir)) {
      if (applied.has(migration.version)) continue
      try {
        await statements.apply(migration)
      } catch (error) {
        throw new Error(`${storeName} migration ${migration.name} failed: ${(error as Error).message}`, {
          cause: error,
        })
      }
    }
  })
}
