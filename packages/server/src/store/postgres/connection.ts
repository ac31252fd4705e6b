/**
 * Connection settings shared by the pool, the LISTEN client and the migration session.
 */

import pg, { type ClientConfig, type CustomTypesConfig, type PoolConfig } from 'pg'
import type { StoreCoreOptions } from '../core/store-core.ts'

/** `dedupeWindowMs` (the store core's option) is the window across every process; older keys are swept. */
export interface PostgresStoreOptions extends Pick<StoreCoreOptions, 'dedupeWindowMs' | 'secretKeys'> {
  /** A `postgres://` or `postgresql://` URL. */
  connectionString: string
  /** Most pooled connections this process opens (the LISTEN connection comes on top). Default 10. */
  poolSize?: number
  /**
   * Server-side statement timeout in ms (0 = none). Default 30,000. A statement that runs longer is
   * cancelled by PostgreSQL and rolled back, so its caller gets an error, never a half-done write.
   */
  statementTimeoutMs?: number
  /** How long to wait for a new connection before the operation fails. Default 5,000 ms. */
  connectTimeoutMs?: number
  /**
   * Schema to work in (created by the caller), set as each connection's `search_path`. Default: the
   * URL's own `search_path` (usually `public`). Tests give every run its own schema.
   */
  schema?: string
  /** Where connection trouble is reported (pino-compatible). Default: silent. */
  logger?: StoreLogger
  /** Shown in pg_stat_activity. Default `sluice`. */
  applicationName?: string
}

export interface StoreLogger {
  warn(details: Record<string, unknown>, message: string): void
  info(details: Record<string, unknown>, message: string): void
}

export const SILENT_LOGGER: StoreLogger = { warn() {}, info() {} }

const INT8_OID = 20
/**
 * BIGINT columns (epoch-ms times, BIGSERIAL ids, COUNT(*)) come back as JS numbers. Every value Sluice
 * keeps in them is far below 2^53, so the conversion is exact. Set per connection, never globally, so
 * other users of `pg` in the process are unaffected.
 */
const TYPES: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format ?? 'text')) as CustomTypesConfig['getTypeParser'],
}

/** Client settings for one connection; `pool` adds the pool's own. */
export function clientConfig(options: PostgresStoreOptions): ClientConfig {
  const startupOptions: string[] = []
  if (options.schema !== undefined) {
    if (!/^[a-z_][a-z0-9_]*$/.test(options.schema)) {
      throw new Error(`PostgreSQL schema name "${options.schema}" must be lower-case letters, digits and _.`)
    }
    startupOptions.push(`-c search_path=${options.schema}`)
  }
  // pg lets the URL's parameters override the config object, so a URL `options` parameter is taken
  // out of the URL and merged with ours instead.
  const url = new URL(options.connectionString)
  const urlOptions = url.searchParams.get('options')
  if (urlOptions) {
    startupOptions.unshift(urlOptions)
    url.searchParams.delete('options')
  }
  return {
    connectionString: url.toString(),
    ...(startupOptions.length > 0 ? { options: startupOptions.join(' ') } : {}),
    application_name: options.applicationName ?? 'sluice',
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    // A transaction left open by a stuck process must not hold its row locks (dedupe keys, leases) for ever.
    idle_in_transaction_session_timeout: 60_000,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    types: TYPES,
  }
}

export function poolConfig(options: PostgresStoreOptions): PoolConfig {
  return {
    ...clientConfig(options),
    max: options.poolSize ?? 10,
    idleTimeoutMillis: 30_000,
  }
}

/**
 * PostgreSQL TEXT cannot hold U+0000; one such character would make the whole statement — and every
 * other request grouped into the same commit — fail. Text that comes from outside (message ids, names,
 * receivers' responses) goes through this. JSON payloads need not: JSON.stringify escapes U+0000.
 */
export function pgText(value: string): string
export function pgText(value: string | null): string | null
export function pgText(value: string | null): string | null {
  return value?.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value
}
