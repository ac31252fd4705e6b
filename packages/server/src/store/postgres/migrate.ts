/**
 * Numbered migrations (`migrations/NNN_name.sql`), safe when several processes start at once.
 *
 * Every process that starts runs this. They queue on one session advisory lock; the first applies the
 * pending files, each in its own transaction together with its `schema_migrations` row; the others then
 * find them recorded and apply nothing. If the process holding the lock dies, PostgreSQL releases the
 * lock with its session and the half-applied migration is rolled back with its transaction, so the
 * next process simply starts it again.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type pg from 'pg'

const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations')
/** The lock is per schema, so stores in different schemas of one database don't wait on each other. */
const LOCK_KEY = "hashtext('sluice.migrate'), hashtext(COALESCE(current_schema(), ''))"

export function migrationFiles(): { version: number; name: string; sql: string }[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((file) => /^\d{3}_.+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file,
      sql: readFileSync(join(MIGRATIONS_DIR, file), 'utf8'),
    }))
}

/** Applies pending migrations on `client` (a dedicated connection with no statement timeout). */
export async function migrate(client: pg.Client): Promise<void> {
  await client.query(`SELECT pg_advisory_lock(${LOCK_KEY})`)
  try {
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)',
    )
    const applied = new Set(
      (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map(
        (row) => row.version,
      ),
    )
    for (const migration of migrationFiles()) {
      if (applied.has(migration.version)) continue
      await client.query('BEGIN')
      try {
        await client.query(migration.sql)
        await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
          migration.version,
          migration.name,
          Date.now(),
        ])
        await client.query('COMMIT')
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw new Error(`PostgreSQL migration ${migration.name} failed: ${(error as Error).message}`, {
          cause: error,
        })
      }
    }
  } finally {
    await client.query(`SELECT pg_advisory_unlock(${LOCK_KEY})`).catch(() => {})
  }
}
