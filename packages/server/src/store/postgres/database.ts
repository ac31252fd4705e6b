/**
 * The PostgreSQL connections of one store: the pool, transactions, retries of statements PostgreSQL
 * rolled back as a whole, and dedicated sessions (advisory locks, migrations).
 *
 * Connection loss: the pool drops broken connections and opens new ones; a statement that fails
 * (including a COMMIT cut off by a restart) rejects its promise, so the Tracking API answers 5xx and the
 * client retries — never a 200 for an unknown outcome. A retry of a message that did commit is dropped
 * by the dedupe rule.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import pg, { type Pool, type PoolClient, type QueryResultRow } from 'pg'
import { clientConfig, type PostgresStoreOptions, poolConfig, type StoreLogger } from './connection.ts'
import { retryRolledBack } from './rollback-retry.ts'

export class PostgresDatabase {
  readonly options: PostgresStoreOptions
  readonly logger: StoreLogger
  private readonly pool: Pool
  /**
   * The connection of the transaction the current async context runs in, if any: statements and
   * inner transactions started there join it (see `transaction`).
   */
  private readonly ambient = new AsyncLocalStorage<PoolClient>()

  constructor(options: PostgresStoreOptions, logger: StoreLogger) {
    this.options = options
    this.logger = logger
    this.pool = new pg.Pool(poolConfig(options))
    // An idle pooled connection that dies (PostgreSQL restarted, network cut) emits 'error' on the pool;
    // without a listener that would crash the process. The pool has already discarded the connection
    // and opens a new one on demand: nothing else to do.
    this.pool.on('error', (error) => {
      this.logger.warn({ err: error }, 'postgres: an idle connection was lost; it will be replaced')
    })
  }

  /** One statement on any pooled connection (its own transaction); its rows. */
  async query<R extends QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    return (await (this.ambient.getStore() ?? this.pool).query<R>(text, values)).rows
  }

  /** One statement on any pooled connection; how many rows it changed. */
  async run(text: string, values: unknown[] = []): Promise<number> {
    return (await (this.ambient.getStore() ?? this.pool).query(text, values)).rowCount ?? 0
  }

  /** Runs a statement again while PostgreSQL rolls it back as a whole (rollback-retry.ts). */
  retrying<T>(work: () => Promise<T>): Promise<T> {
    // Inside a transaction a failed statement has aborted it: only the outermost caller can start over.
    if (this.ambient.getStore()) return work()
    return retryRolledBack(work)
  }

  /** Runs `work` on one pooled connection of its own; a connection that saw an error is discarded. */
  async withClient<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect()
    // Between statements a checked-out client has no query to fail, so a dropped connection would
    // surface as an unhandled 'error' event. The failing statement reports it to the caller instead.
    const ignore = () => {}
    client.on('error', ignore)
    let broken: Error | undefined
    try {
      return await work(client)
    } catch (error) {
      broken = error as Error
      throw error
    } finally {
      client.off('error', ignore)
      // A client whose work failed is discarded rather than reused: its state is unknown.
      client.release(broken)
    }
  }

  /**
   * Runs `work` in one transaction on one connection; rolls back and rethrows on any error. A
   * transaction PostgreSQL rolled back as a whole (deadlock, serialization failure) is run again
   * (rollback-retry.ts): `work` must have no effect outside the database before it returns. Inside
   * `composedTransaction`, it joins that one (and the outermost transaction is the one run again).
   */
  transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const outer = this.ambient.getStore()
    if (outer) return work(outer)
    return retryRolledBack(() =>
      this.withClient(async (client) => {
        await client.query('BEGIN')
        try {
          const result = await work(client)
          await client.query('COMMIT')
          return result
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {})
          throw error
        }
      }),
    )
  }

  /**
   * Runs `work` in one transaction in which every statement (`query`, `run`) and every inner
   * `transaction` of this database joins it, so the tables' own writes compose into one larger
   * transaction (sql/config.ts). Only for work that runs nothing else concurrently.
   */
  composedTransaction<T>(work: () => Promise<T>): Promise<T> {
    return this.transaction((client) => this.ambient.run(client, work))
  }

  /** Runs `work` on a new connection outside the pool, with no statement timeout (migrations). */
  async session<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ ...clientConfig(this.options), statement_timeout: 0 })
    client.on('error', () => {}) // reported by the failing query
    await client.connect()
    try {
      return await work(client)
    } finally {
      await client.end().catch(() => {})
    }
  }

  /** "200 means committed to disk" holds only if PostgreSQL waits for its WAL flush at commit: says so if not. */
  async warnIfCommitsAreNotDurable(): Promise<void> {
    const settings = await this.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('synchronous_commit', 'fsync')",
    )
    for (const { name, setting } of settings) {
      if (setting === 'off') {
        this.logger.warn(
          { [name]: setting },
          `postgres: ${name} is off, so an acknowledged message can be lost if PostgreSQL crashes; turn it on for Sluice's database or role`,
        )
      }
    }
  }

  end(): Promise<void> {
    return this.pool.end()
  }
}
