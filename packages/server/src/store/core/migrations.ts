/**
 * Numbered migrations (`migrations/NNN_name.sql` in each backend's folder), applied in order, each in its
 * own transaction together with its `schema_migrations` row, so a migration cut off half-way is rolled
 * back and simply applied again at the next start.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Migration, MigrationsSql } from './store-sql.ts'

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
