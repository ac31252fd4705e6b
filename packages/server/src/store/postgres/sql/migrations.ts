/**
 * Migrations on PostgreSQL, safe when several processes start at once.
 *
 * Every process that starts runs them. They queue on one session advisory lock; the first applies the
 * pending files, each in its own transaction together with its `schema_migrations` row; the others then
 * find them recorded and apply nothing. If the process holding the lock dies, PostgreSQL releases the
 * lock with its session and the half-applied migration is rolled back with its transaction, so the
 * next process simply starts it again.
 */
import { join } from 'node:path'
import type { MigrationsSql } from '../../core/migrations.ts'
import type { PostgresDatabase } from '../database.ts'

export const POSTGRES_MIGRATIONS_DIR = join(import.meta.dirname, '..', 'migrations')
/** The lock is per schema, so stores in different schemas of one database don't wait on each other. */
const LOCK_KEY = "hashtext('sluice.migrate'), hashtext(COALESCE(current_schema(), ''))"

export function postgresMigrations(db: PostgresDatabase): MigrationsSql {
  return {
    dir: POSTGRES_MIGRATIONS_DIR,
    // A dedicated session: the lock is held by the session, and a migration may outlast any timeout.
    exclusive: (work) =>
      db.session(async (client) => {
        await client.query(`SELECT pg_advisory_lock(${LOCK_KEY})`)
        try {
          await work({
            async applied() {
              await client.query(
                'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)',
              )
              const { rows } = await client.query<{ version: number }>(
                'SELECT version FROM schema_migrations',
              )
              return rows.map((row) => row.version)
            },
            async apply(migration) {
              await client.query('BEGIN')
              try {
                await client.query(migration.sql)
                await client.query(
                  'INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)',
                  [migration.version, migration.name, Date.now()],
                )
                await client.query('COMMIT')
              } catch (error) {
                await client.query('ROLLBACK').catch(() => {})
                throw error
              }
            },
          })
        } finally {
          await client.query(`SELECT pg_advisory_unlock(${LOCK_KEY})`).catch(() => {})
        }
      }),
  }
}
