/**
 * The SQLite connection: one file in WAL mode, prepared statements cached by their text, write
 * transactions. node:sqlite is synchronous; the server runs all of this on its own thread
 * (threaded-store.ts).
 */
import { closeSync, openSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync, type StatementSync } from 'node:sqlite'
import { privateDirectory, privateFiles } from '../../lib/private-files.ts'

/**
 * WAL pages after which a commit also folds the WAL into the database file (SQLite's default). The
 * server runs this store on its own thread (threaded-store.ts), so that checkpoint stalls only the
 * store thread for a few milliseconds, never HTTP handling or deliveries, and the WAL stays ~4 MB.
 */
const AUTOCHECKPOINT_PAGES = 1_000

export interface SqliteDatabaseOptions {
  /** Folder holding `sluice.db` (created if missing). */
  dataDir: string
  /** `FULL` fsyncs the WAL on every commit (power-loss safe); `NORMAL` only survives process crashes. */
  synchronous: 'FULL' | 'NORMAL'
}

export const databasePath = (dataDir: string): string => join(dataDir, 'sluice.db')

export class SqliteDatabase {
  readonly path: string
  private readonly db: DatabaseSync
  private readonly statements = new Map<string, StatementSync>()
  private readonly synchronous: 'FULL' | 'NORMAL'
  /** Open `transaction` calls: an inner one joins the outer (see `transaction`). */
  private transactionDepth = 0

  constructor(options: SqliteDatabaseOptions) {
    privateDirectory(options.dataDir)
    this.path = databasePath(options.dataDir)
    // Created 0600 before SQLite opens it: SQLite gives the -wal and -shm files the database's mode.
    closeSync(openSync(this.path, 'a', 0o600))
    privateFiles(this.path, `${this.path}-wal`, `${this.path}-shm`)
    this.db = new DatabaseSync(this.path)
    this.db.exec('PRAGMA journal_mode = WAL')
    this.synchronous = options.synchronous
    this.db.exec(`PRAGMA synchronous = ${options.synchronous}`)
    this.db.exec('PRAGMA foreign_keys = ON')
    this.db.exec('PRAGMA busy_timeout = 5000')
    this.db.exec(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`)
    // A row rewritten (a secret sealed at start, a regulation's erasure) leaves no old bytes in its
    // page's free space; FAST costs no extra I/O.
    this.db.exec('PRAGMA secure_delete = FAST')
  }

  /**
   * The prepared statement for `text`, prepared once. A LIMIT taken from a parameter is written
   * `LIMIT +?`, never with a bare `?`: SQLite (3.53) re-prepares a statement whose LIMIT is a bare parameter
   * every time that parameter is bound (parsed and planned again at each run: the claim's SELECT took
   * 22 µs a run instead of 3.5); the expression gives the same plan, made once. A test keeps it so.
   */
  sql(text: string): StatementSync {
    let statement = this.statements.get(text)
    if (!statement) {
      statement = this.db.prepare(text)
      this.statements.set(text, statement)
    }
    return statement
  }

  /** Makes `fn` callable from this connection's SQL (and its triggers) as `name()`. */
  defineFunction(name: string, fn: () => null): void {
    this.db.function(name, { deterministic: false, directOnly: false }, fn)
  }

  /** Runs a script (several statements, no parameters). */
  exec(script: string): void {
    this.db.exec(script)
  }

  /** Whether a `transaction` is open: what is written now commits only with it. */
  get inTransaction(): boolean {
    return this.transactionDepth > 0
  }

  /**
   * Runs `work` in one write transaction; rolls back and rethrows on any error. Called inside another
   * transaction's work, it joins that one (an error rolls the whole outer transaction back), so the
   * tables' own multi-statement writes compose into one larger transaction (sql/config.ts).
   */
  transaction<T>(work: () => T): T {
    if (this.transactionDepth > 0) return this.nested(work)
    this.db.exec('BEGIN IMMEDIATE')
    try {
      const result = this.nested(work)
      this.db.exec('COMMIT')
      return result
    } catch (error) {
      this.db.exec('ROLLBACK')
      throw error
    }
  }

  private nested<T>(work: () => T): T {
    this.transactionDepth++
    try {
      return work()
    } finally {
      this.transactionDepth--
    }
  }

  /**
   * Runs `work` with commits that are not fsynced. Only for writes whose loss on power failure is
   * harmless: a lost lease just means the delivery is attempted again sooner. (Visibility to other
   * connections is the same either way; a later fsynced commit also persists these.)
   */
  withoutFsync<T>(work: () => T): T {
    if (this.synchronous === 'NORMAL') return work()
    this.db.exec('PRAGMA synchronous = NORMAL')
    try {
      return work()
    } finally {
      this.db.exec('PRAGMA synchronous = FULL')
    }
  }

  /** Folds the WAL into the database file and empties it. */
  checkpoint(): void {
    this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  }

  close(): void {
    if (!this.db.isOpen) return
    // Fold the WAL into the database file so a closed store is one self-contained file.
    this.checkpoint()
    this.db.close()
  }
}

/** `count` copies of `one`, comma-separated: a multi-row VALUES list or an IN list. */
export function placeholders(count: number, one: string): string {
  return new Array(count).fill(one).join(', ')
}

/** Rows per multi-row statement: 5 parameters a row stays far below SQLite's 32,766. */
export const ROWS_PER_STATEMENT = 100

/** SQLite has no boolean type: 1 and 0. */
export const flag = (value: boolean): number => (value ? 1 : 0)
