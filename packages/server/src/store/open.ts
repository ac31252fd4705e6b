import type { Config } from '../config.ts'
import type { Logger } from '../lib/logger.ts'
import { ThreadedSqliteStore } from './sqlite/threaded-store.ts'
import type { Store } from './store.ts'

/** Opens the store the configuration names and applies its migrations. */
export async function openStore(config: Config, logger: Logger): Promise<Store> {
  if (config.databaseUrl && /^postgres(ql)?:\/\//.test(config.databaseUrl)) {
    throw new Error(
      'DATABASE_URL names PostgreSQL, which this version of Sluice does not support yet. Unset DATABASE_URL to use the embedded SQLite store.',
    )
  }
  if (config.databaseUrl) {
    throw new Error(
      `DATABASE_URL must be a postgres:// URL or unset (embedded SQLite); got "${config.databaseUrl}".`,
    )
  }
  const store = new ThreadedSqliteStore({ dataDir: config.dataDir, synchronous: config.sqliteSynchronous })
  await store.migrate()
  logger.debug({ store: store.kind, path: store.path }, 'store ready')
  return store
}
