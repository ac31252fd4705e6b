/**
 * The real PostgreSQL the tests run against: 127.0.0.1:5432, database `test`, trust auth (override with
 * SLUICE_TEST_DATABASE_URL). Tests never skip when it is down: they fail and say how to start it.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { PostgresStore, type PostgresStoreOptions } from '../../src/store/postgres/postgres-store.ts'

export const TEST_DATABASE_URL =
  process.env.SLUICE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

const HOW_TO_START =
  'Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start ' +
  '(or point SLUICE_TEST_DATABASE_URL at another PostgreSQL).'

/** Runs `work` on a short-lived admin connection; a connection failure explains how to start PostgreSQL. */
export async function withAdmin<T>(
  work: (client: pg.Client) => Promise<T>,
  url = TEST_DATABASE_URL,
): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 })
  client.on('error', () => {})
  try {
    await client.connect()
  } catch (error) {
    throw new Error(
      `These tests need PostgreSQL at ${url} and could not connect (${(error as Error).message}). ${HOW_TO_START}`,
      { cause: error },
    )
  }
  try {
    return await work(client)
  } finally {
    await client.end().catch(() => {})
  }
}

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`
}

/** A new empty schema in the test database; `drop()` removes it with everything in it. */
export async function freshSchema(): Promise<{ schema: string; drop(): Promise<void> }> {
  const schema = uniqueName('sluice_t')
  await withAdmin((client) => client.query(`CREATE SCHEMA ${schema}`))
  return {
    schema,
    drop: () => withAdmin((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(() => {}),
  }
}

/** A new empty database on the test server (for multi-process tests); `drop()` removes it. */
export async function freshDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = uniqueName('sluice_mp')
  await withAdmin((client) => client.query(`CREATE DATABASE ${name}`))
  const url = new URL(TEST_DATABASE_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    name,
    drop: () =>
      withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  }
}

/** A migrated PostgresStore on `schema`. */
export async function openPgStore(
  schema: string,
  options: Partial<PostgresStoreOptions> = {},
): Promise<PostgresStore> {
  const store = new PostgresStore({ connectionString: TEST_DATABASE_URL, schema, poolSize: 5, ...options })
  await store.migrate()
  return store
}
