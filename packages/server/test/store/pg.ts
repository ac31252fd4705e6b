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

/**
 * Backends waiting right now for a lock that backend `holder` holds (pg_blocking_pids reads the lock
 * table live). `observer` must be outside any transaction: pg_stat_activity is read once per transaction.
 */
export async function waitersFor(observer: pg.Client, holder: number): Promise<number[]> {
  const { rows } = await observer.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))',
    [holder],
  )
  return rows.map((row) => row.pid)
}

/** The backend pid of a connection. */
export async function backendPid(client: pg.Client): Promise<number> {
  return (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
}

/** Polls `read` until `done` holds; fails naming what it waited for after `timeoutMs` (generous: it returns as soon as it holds). */
export async function pollUntil<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > end)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/**
 * Runs `changes` in another process's open transaction on `schema`, starts `work`, and commits the
 * changes only once `work` waits on a row they hold: the one interleaving where `work` read before the
 * other process committed. Resolves with what `work` resolves with.
 */
export async function whileAnotherCommits<T>(
  schema: string,
  changes: [string, unknown[]?][],
  work: () => Promise<T>,
): Promise<T> {
  const other = new pg.Client({ connectionString: TEST_DATABASE_URL })
  const observer = new pg.Client({ connectionString: TEST_DATABASE_URL })
  try {
    await other.connect()
    await observer.connect()
    await other.query(`SET search_path TO ${schema}`)
    await other.query('BEGIN')
    for (const [text, values] of changes) await other.query(text, values)
    const working = work()
    const otherPid = await backendPid(other)
    await pollUntil(
      'the work to wait on the changed row',
      () => waitersFor(observer, otherPid),
      (waiting) => waiting.length > 0,
    )
    await other.query('COMMIT')
    return await working
  } finally {
    await other.end().catch(() => {})
    await observer.end().catch(() => {})
  }
}
