import type { Config } from '../config.ts'
import { createLogger, type Logger } from '../lib/logger.ts'
import { resolveSecretKeys } from './secret-keys.ts'
import { ThreadedSqliteStore } from './sqlite/threaded-store.ts'
import type { Store } from './store.ts'

/** Opens the store the configuration names and applies its migrations. `logger` defaults to one at the configured level. */
export async function openStore(
  config: Config,
  logger: Logger = createLogger(config.logLevel),
): Promise<Store> {
  const dedupeWindowMs = config.dedupeWindowHours * 3_600_000
  const secretKeys = resolveSecretKeys(config)
  if (config.databaseUrl && /^postgres(ql)?:\/\//.test(config.databaseUrl)) {
    // Loaded only here: the embedded SQLite default never pays for the PostgreSQL client's modules.
    const { PostgresStore } = await import('./postgres/postgres-store.ts')
    const store = new PostgresStore({
      connectionString: config.databaseUrl,
      poolSize: config.postgresPoolSize,
      statementTimeoutMs: config.postgresStatementTimeoutMs,
      dedupeWindowMs,
      secretKeys,
      logger,
    })
    try {
      await store.migrate() // under an advisory lock: safe when several processes start together
    } catch (error) {
      await store.close().catch(() => {})
      throw error
    }
    logger.debug({ store: store.kind }, 'store ready')
    return store
  }
  if (config.databaseUrl) {
    throw new Error(
      `DATABASE_URL must be a postgres:// URL or unset (embedded SQLite); got "${config.databaseUrl}".`,
    )
  }
  const store = new ThreadedSqliteStore({
    dataDir: config.dataDir,
    synchronous: config.sqliteSynchronous,
    dedupeWindowMs,
    secretKeys,
  })
  try {
    await store.migrate()
  } catch (error) {
    await store.close().catch(() => {})
    throw error
  }
  logger.debug({ store: store.kind, path: store.path }, 'store ready')
  return store
}
