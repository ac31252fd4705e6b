import { resolve } from 'node:path'
import { DEFAULT_RETRY_SETTINGS, type RetrySettings, retrySettings } from './deliver/retry-policy.ts'
import { DEFAULT_DEDUPE_WINDOW_HOURS } from './domain/messages.ts'
import { otlpTracesUrl } from './observe/tracing.ts'

/**
 * Every setting Sluice reads, with its default. The README's configuration table mirrors this file.
 */
export type Role = 'api' | 'worker' | 'all'

export interface Config {
  /**
   * `SLUICE_ROLE` or `sluice start --role`, default `all`. `api` accepts and stores (Tracking and
   * management APIs); `worker` only delivers (and serves /healthz, /readyz); `all` does both.
   */
  role: Role
  /** `PORT`, default 8080. */
  port: number
  /** `HOST`, default `127.0.0.1` (set `0.0.0.0` to listen on every interface). */
  host: string
  /** `SLUICE_DATA_DIR`, default `./.sluice`: the SQLite database and the generated admin token. */
  dataDir: string
  /** `DATABASE_URL`; absent means embedded SQLite in `dataDir`. */
  databaseUrl: string | undefined
  /**
   * `SLUICE_ADMIN_TOKEN`; when unset a token is generated at first start and kept in `dataDir`. At
   * least 24 characters (app/admin-token.ts refuses a shorter one at start).
   */
  adminToken: string | undefined
  /** `LOG_LEVEL`, default `info` (`silent` to turn logging off). */
  logLevel: string
  /** `SLUICE_RETENTION_DAYS`, default 30: accepted messages are deleted after this many days once final. */
  retentionDays: number
  /** `SLUICE_DEDUPE_WINDOW_HOURS`, default 24: a repeated messageId from a source inside it is dropped. */
  dedupeWindowHours: number
  /**
   * `SLUICE_PUBLIC_URL`: the URL browsers reach this Sluice at (e.g. `https://sluice.example.com`),
   * without a trailing slash. The browser SDK settings point back at it. Unset: the scheme and host of
   * each settings request.
   */
  publicUrl: string | undefined
  /**
   * `SLUICE_TRUST_PROXY`, default `false`: which reverse proxies' `X-Forwarded-For`, `-Proto` and
   * `-Host` headers are believed (for `context.ip` and the settings' URLs). `true` trusts any, a number
   * that many hops, otherwise a comma-separated list of addresses or CIDR ranges.
   */
  trustProxy: boolean | number | string
  /** `SLUICE_ALLOW_PRIVATE_DESTINATIONS`, default false: allow webhook URLs on private/loopback addresses. */
  allowPrivateDestinations: boolean
  /** `SLUICE_SQLITE_SYNCHRONOUS`, default `FULL`: SQLite's fsync level (`NORMAL` trades power-loss safety for speed). */
  sqliteSynchronous: 'FULL' | 'NORMAL'
  /**
   * Delivery retry schedule. `SLUICE_RETRY_WINDOW_SECONDS` (default 14400 = 4 h),
   * `SLUICE_RETRY_BASE_DELAY_MS` (1000), `SLUICE_RETRY_MAX_DELAY_MS` (1800000),
   * `SLUICE_REQUEST_TIMEOUT_MS` (5000: a receiver has 5 seconds to answer).
   */
  retry: RetrySettings
  /** `SLUICE_DELIVERY_LEASE_MS`, default 30000: a crashed process's claims are picked up again after this. */
  deliveryLeaseMs: number
  /** `SLUICE_DELIVERY_CONCURRENCY`, default 32: most requests in flight per destination. */
  deliveryConcurrency: number
  /**
   * `SLUICE_REPLAY_HOLD_MS`, default 10000: a replay reads only calls received at least this long ago,
   * so a call whose commit lagged its receipt by less is not passed over (replay-runner.ts).
   */
  replayHoldMs: number
  /**
   * How long one hour of a destination's `autoDisable.afterHours` lasts. Default 3,600,000 ms; no
   * environment variable: only tests shorten it.
   */
  autoDisableHourMs?: number
  /**
   * How often an idle delivery engine looks for due work it was not woken for. Default 1,000 ms; no
   * environment variable: only tests change it (to prove that a commit wakes the engine at once).
   */
  deliveryPollMs?: number
  /**
   * `SLUICE_AUDIENCE_REFRESH_SECONDS`, default 60: how often computed traits with a `withinDays`
   * window are re-checked, so profiles whose calls aged out of the window get their new value.
   */
  audienceRefreshSeconds: number
  /** `SLUICE_PG_POOL_SIZE`, default 10: most pooled PostgreSQL connections per process (one LISTEN connection comes on top). */
  postgresPoolSize: number
  /** `SLUICE_PG_STATEMENT_TIMEOUT_MS`, default 30000 (0 = none): PostgreSQL cancels and rolls back longer statements. */
  postgresStatementTimeoutMs: number
  /** `SLUICE_METRICS`, default true: `GET /metrics` and the counters behind it; false turns both off. */
  metrics: boolean
  /** `SLUICE_METRICS_PUBLIC`, default false: serve `/metrics` without an access token. */
  metricsPublic: boolean
  /**
   * `SLUICE_INGEST_QUEUE_BYTES`, default 32 MiB: accepted calls (serialized) waiting for their commit;
   * past it the Tracking API answers `503` with `Retry-After` (ingest/overload.ts).
   */
  ingestQueueBytes: number
  /**
   * Where OpenTelemetry spans go over OTLP/HTTP: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else
   * `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. Unset (default): tracing is off.
   */
  otlpTracesUrl: string | undefined
  /**
   * `SLUICE_SHUTDOWN_TIMEOUT_MS`, default 25000: a graceful shutdown that has not finished by then (a
   * store that stopped answering) is abandoned and the process exits 1; claims then return after
   * their lease. Below a container's usual 30-second grace period, so Sluice says why it stopped.
   */
  shutdownTimeoutMs: number
  /**
   * `SLUICE_CLIENT_HEADERS_TIMEOUT_MS`, default 10000: a client has this long from the start of a
   * request to send all of its headers; then `408` and the connection is closed (slowloris).
   */
  clientHeadersTimeoutMs: number
  /**
   * `SLUICE_CLIENT_REQUEST_TIMEOUT_MS`, default 30000: a client has this long from the start of a
   * request to send all of it, body included (a 500 KB batch at 20 KB/s); then `408` and the
   * connection is closed. At least `SLUICE_CLIENT_HEADERS_TIMEOUT_MS`. Time spent answering does not
   * count: a live-debugger stream stays open.
   */
  clientRequestTimeoutMs: number
  /**
   * `SLUICE_AUTH_FAILURES_PER_MINUTE`, default 20: failed attempts to authenticate (wrong tokens,
   * forged session cookies, wrong sign-ins) one client address may make within a minute; then every
   * attempt from it answers `429` until the minute has passed (manage/auth-throttle.ts). `0` turns
   * throttling off. The Tracking API is never throttled.
   */
  authFailuresPerMinute: number
  /**
   * `SLUICE_SECRET_KEY`: base64 of 32 random bytes (`openssl rand -base64 32`), the key destinations'
   * settings are encrypted with at rest. Unset: a key generated at first start and kept in
   * `<dataDir>/secret-key` (mode 0600); required with `DATABASE_URL`, so every process has the same.
   */
  secretKey: string | undefined
  /** `SLUICE_SECRET_KEY_PREVIOUS`: the key being rotated away from; only read, values move to the new key at start. */
  secretKeyPrevious: string | undefined
}

export class ConfigError extends Error {
  constructor(name: string, message: string) {
    super(`${name}: ${message}`)
    this.name = 'ConfigError'
  }
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(name, `expected a whole number from ${min} to ${max}, got "${raw}"`)
  }
  return value
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true
  if (['false', '0', 'no'].includes(raw.toLowerCase())) return false
  throw new ConfigError(name, `expected true or false, got "${raw}"`)
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const synchronous = (env.SLUICE_SQLITE_SYNCHRONOUS ?? 'FULL').toUpperCase()
  if (synchronous !== 'FULL' && synchronous !== 'NORMAL') {
    throw new ConfigError('SLUICE_SQLITE_SYNCHRONOUS', `expected FULL or NORMAL, got "${synchronous}"`)
  }
  const retentionDays = integer(env, 'SLUICE_RETENTION_DAYS', 30, 1, 3650)
  const dedupeWindowHours = integer(
    env,
    'SLUICE_DEDUPE_WINDOW_HOURS',
    DEFAULT_DEDUPE_WINDOW_HOURS,
    1,
    24 * 30,
  )
  if (retentionDays * 24 < dedupeWindowHours) {
    // Dedupe looks messageIds up among stored messages, so they must outlive the window.
    throw new ConfigError(
      'SLUICE_RETENTION_DAYS',
      `must cover the dedupe window (SLUICE_DEDUPE_WINDOW_HOURS=${dedupeWindowHours}); raise it to at least ${Math.ceil(dedupeWindowHours / 24)}`,
    )
  }
  const role = env.SLUICE_ROLE || 'all'
  if (role !== 'api' && role !== 'worker' && role !== 'all') {
    throw new ConfigError('SLUICE_ROLE', `expected api, worker or all, got "${role}"`)
  }
  return {
    role,
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '127.0.0.1',
    dataDir: resolve(env.SLUICE_DATA_DIR || './.sluice'),
    databaseUrl: env.DATABASE_URL || undefined,
    adminToken: env.SLUICE_ADMIN_TOKEN || undefined,
    logLevel: env.LOG_LEVEL || 'info',
    retentionDays,
    dedupeWindowHours,
    publicUrl: publicUrl(env),
    trustProxy: trustProxy(env),
    allowPrivateDestinations: boolean(env, 'SLUICE_ALLOW_PRIVATE_DESTINATIONS', false),
    sqliteSynchronous: synchronous,
    retry: retryConfig(env),
    deliveryLeaseMs: integer(env, 'SLUICE_DELIVERY_LEASE_MS', 30_000, 1_000, 3_600_000),
    deliveryConcurrency: integer(env, 'SLUICE_DELIVERY_CONCURRENCY', 32, 1, 1_000),
    replayHoldMs: integer(env, 'SLUICE_REPLAY_HOLD_MS', 10_000, 0, 600_000),
    postgresPoolSize: integer(env, 'SLUICE_PG_POOL_SIZE', 10, 1, 1_000),
    audienceRefreshSeconds: integer(env, 'SLUICE_AUDIENCE_REFRESH_SECONDS', 60, 1, 86_400),
    postgresStatementTimeoutMs: integer(env, 'SLUICE_PG_STATEMENT_TIMEOUT_MS', 30_000, 0, 3_600_000),
    metrics: boolean(env, 'SLUICE_METRICS', true),
    metricsPublic: boolean(env, 'SLUICE_METRICS_PUBLIC', false),
    ingestQueueBytes: integer(env, 'SLUICE_INGEST_QUEUE_BYTES', 32 * 1024 * 1024, 1024 * 1024, 2 ** 32),
    otlpTracesUrl: otlpTracesUrl(env),
    shutdownTimeoutMs: integer(env, 'SLUICE_SHUTDOWN_TIMEOUT_MS', 25_000, 1_000, 3_600_000),
    ...clientTimeouts(env),
    authFailuresPerMinute: integer(env, 'SLUICE_AUTH_FAILURES_PER_MINUTE', 20, 0, 100_000),
    secretKey: secretKey(env, 'SLUICE_SECRET_KEY'),
    secretKeyPrevious: secretKey(env, 'SLUICE_SECRET_KEY_PREVIOUS'),
  }
}

/** A secret key setting: base64 (or base64url) of exactly 32 bytes, returned as base64. */
export function secretKey(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name]?.trim()
  if (!raw) return undefined
  const bytes = Buffer.from(raw, 'base64')
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw) || bytes.length !== 32) {
    throw new ConfigError(
      name,
      `must be base64 of exactly 32 random bytes (got ${bytes.length} bytes); make one with: openssl rand -base64 32`,
    )
  }
  return bytes.toString('base64')
}

/** How long a client may take to send a request's headers, and all of it; checked together. */
function clientTimeouts(
  env: NodeJS.ProcessEnv,
): Pick<Config, 'clientHeadersTimeoutMs' | 'clientRequestTimeoutMs'> {
  const clientHeadersTimeoutMs = integer(env, 'SLUICE_CLIENT_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000)
  const clientRequestTimeoutMs = integer(env, 'SLUICE_CLIENT_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000)
  if (clientRequestTimeoutMs < clientHeadersTimeoutMs) {
    throw new ConfigError(
      'SLUICE_CLIENT_REQUEST_TIMEOUT_MS',
      `must be at least SLUICE_CLIENT_HEADERS_TIMEOUT_MS (${clientHeadersTimeoutMs}): the headers are part of the request; got ${clientRequestTimeoutMs}`,
    )
  }
  return { clientHeadersTimeoutMs, clientRequestTimeoutMs }
}

/** `SLUICE_PUBLIC_URL`: an absolute http(s) URL with no query or fragment, kept without a trailing slash. */
function publicUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.SLUICE_PUBLIC_URL
  if (!raw) return undefined
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(
      'SLUICE_PUBLIC_URL',
      `expected an absolute URL such as https://sluice.example.com, got "${raw}"`,
    )
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username) {
    throw new ConfigError(
      'SLUICE_PUBLIC_URL',
      `expected an http or https URL without credentials, query or fragment, got "${raw}"`,
    )
  }
  return url.href.replace(/\/+$/, '')
}

/** `SLUICE_TRUST_PROXY`: false (default), true, a hop count, or addresses and CIDR ranges (as Fastify's trustProxy). */
function trustProxy(env: NodeJS.ProcessEnv): boolean | number | string {
  const raw = env.SLUICE_TRUST_PROXY?.trim()
  if (!raw) return false
  if (/^\d+$/.test(raw)) return integer(env, 'SLUICE_TRUST_PROXY', 0, 0, 100)
  if (/^(true|false|yes|no)$/i.test(raw)) return boolean(env, 'SLUICE_TRUST_PROXY', false)
  if (!/^[0-9A-Fa-f:.]+(\/\d{1,3})?(\s*,\s*[0-9A-Fa-f:.]+(\/\d{1,3})?)*$/.test(raw)) {
    throw new ConfigError(
      'SLUICE_TRUST_PROXY',
      `expected true, false, a number of hops, or comma-separated addresses or CIDR ranges (10.0.0.0/8), got "${raw}"`,
    )
  }
  return raw
}

/** The retry schedule's settings, checked together: the shortest backoff may not exceed the longest. */
function retryConfig(env: NodeJS.ProcessEnv): RetrySettings {
  const base = DEFAULT_RETRY_SETTINGS
  const baseDelayMs = integer(env, 'SLUICE_RETRY_BASE_DELAY_MS', base.baseDelayMs, 1, 3_600_000)
  const maxDelayMs = integer(env, 'SLUICE_RETRY_MAX_DELAY_MS', base.maxDelayMs, 1, 86_400_000)
  if (maxDelayMs < baseDelayMs) {
    throw new ConfigError(
      'SLUICE_RETRY_MAX_DELAY_MS',
      `must be at least SLUICE_RETRY_BASE_DELAY_MS (${baseDelayMs}), the shortest wait between attempts; got ${maxDelayMs}`,
    )
  }
  return retrySettings({
    windowMs: integer(env, 'SLUICE_RETRY_WINDOW_SECONDS', base.windowMs / 1000, 1, 7 * 86_400) * 1000,
    baseDelayMs,
    maxDelayMs,
    requestTimeoutMs: integer(env, 'SLUICE_REQUEST_TIMEOUT_MS', base.requestTimeoutMs, 100, 60_000),
  })
}
