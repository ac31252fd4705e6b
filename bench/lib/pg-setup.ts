// PostgreSQL set-up for the benchmark: a throw-away database per measurement, and a delivery backlog
// written straight through the store (so the delivery figure measures only the workers).
import { randomBytes } from 'node:crypto'
import { loadConfig, openStore, type Store } from '@sluice/server'
import pg from 'pg'
import { backlogMessages } from './backlog-messages.ts'

/** The secret key every benchmark process on PostgreSQL shares (base64 of 32 bytes). */
export const BENCH_SECRET_KEY = Buffer.alloc(32, 'b').toString('base64')

export const BENCH_DATABASE_URL =
  process.env.SLUICE_BENCH_DATABASE_URL ??
  process.env.SLUICE_TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/test'

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: BENCH_DATABASE_URL, connectionTimeoutMillis: 5_000 })
  try {
    await client.connect()
  } catch (error) {
    throw new Error(
      `The PostgreSQL benchmark needs PostgreSQL at ${BENCH_DATABASE_URL} (${(error as Error).message}). ` +
        'Start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start',
    )
  }
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/** A new empty database; resolves with its URL and a function that drops it. */
export async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `sluice_bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`
  await admin((client) => client.query(`CREATE DATABASE ${name}`))
  const url = new URL(BENCH_DATABASE_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: () =>
      admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  }
}

/** PostgreSQL's version and the settings that bound commit throughput, for the report. */
export async function serverInfo(): Promise<Record<string, string>> {
  return admin(async (client) => {
    const { rows } = await client.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('server_version', 'synchronous_commit', 'fsync', 'shared_buffers', 'max_connections')",
    )
    return Object.fromEntries(rows.map((row) => [row.name, row.setting]))
  })
}

/** The store Sluice opens for `url`, migrated, with a pool of `poolSize` connections. */
function openPostgres(url: string, poolSize: number): Promise<Store> {
  return openStore(
    loadConfig({
      DATABASE_URL: url,
      SLUICE_SECRET_KEY: BENCH_SECRET_KEY,
      SLUICE_PG_POOL_SIZE: String(poolSize),
      LOG_LEVEL: 'silent',
    }),
  )
}

/** Migrates `url` and creates one enabled source; resolves with its write key. */
export async function seedSource(url: string): Promise<string> {
  const store = await openPostgres(url, 1)
  try {
    return (await store.createSource({ name: 'bench', enabled: true })).writeKey
  } finally {
    await store.close()
  }
}

/**
 * Migrates `url`, creates a source and a webhooks destination (disabled, so nothing is delivered yet)
 * and stores `count` messages routed to it. Returns the ids and a store handle to watch progress.
 */
export async function seedBacklog(
  url: string,
  receiverUrl: string,
  count: number,
): Promise<{ store: Store; destinationId: string }> {
  const store = await openPostgres(url, 4)
  const source = await store.createSource({ name: 'bench', enabled: true })
  const destination = await store.createDestination({
    name: 'no-op receiver',
    type: 'webhooks',
    enabled: false,
    sourceIds: [source.id],
    settings: { webhooks: [{ url: receiverUrl, headers: {} }], sharedSecret: 'bench-secret' },
  })
  // Deliveries are created only for enabled destinations: enable, store, then disable until the clock starts.
  await store.updateDestination(destination.id, { enabled: true })
  const now = Date.now()
  for (let offset = 0; offset < count; offset += 2_000) {
    await store.ingest(backlogMessages(source.id, offset, Math.min(count, offset + 2_000), now))
  }
  await store.updateDestination(destination.id, { enabled: false })
  return { store, destinationId: destination.id }
}
