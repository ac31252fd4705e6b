/**
 * The embedded store: one SQLite file in WAL mode (database.ts), its SQL in `sql/` (one module per
 * table, and one per hot statement), under the shared core, which is handed the profile module's rules
 * here (profile/store-rules.ts). node:sqlite is synchronous; calls are short and ingest commits are
 * grouped by the caller. The server runs this store on its own thread (threaded-store.ts); tests and
 * CLI commands also open it in-thread.
 */

import { profileRules } from '../../profile/store-rules.ts'
import { type SecretKeys, StoreCore, type StoreCoreOptions } from '../core/store-core.ts'
import type { StoreSql } from '../core/store-sql.ts'
import { existingKeyFile } from '../secret-keys.ts'
import { SqliteDatabase, type SqliteDatabaseOptions } from './database.ts'
import { IngestHandoff } from './ingest-handoff.ts'
import { sqliteAttempts } from './sql/attempts.ts'
import { sqliteClaimDeliveries } from './sql/claim-deliveries.ts'
import { sqliteComputations } from './sql/computations.ts'
import { sqliteConfig } from './sql/config.ts'
import { sqliteDeliveries } from './sql/deliveries.ts'
import { sqliteDeliveryBatches } from './sql/delivery-batches.ts'
import { sqliteDestinations } from './sql/destinations.ts'
import { sqliteEndpointStates } from './sql/endpoint-states.ts'
import { sqliteIngest } from './sql/ingest.ts'
import { sqliteMessages } from './sql/messages.ts'
import { sqliteMigrations } from './sql/migrations.ts'
import { sqliteOperationalEvents } from './sql/operational-events.ts'
import { sqliteProfiles } from './sql/profiles.ts'
import { sqliteRecordOutcomes } from './sql/record-outcomes.ts'
import { sqliteRegulations } from './sql/regulations.ts'
import { sqliteReplays } from './sql/replays.ts'
import { sqliteRollups } from './sql/rollups.ts'
import { sqliteSources } from './sql/sources.ts'
import { sqliteSweep } from './sql/sweep.ts'
import { sqliteTokens } from './sql/tokens.ts'

function keyFileKeys(dataDir: string): SecretKeys | undefined {
  const current = existingKeyFile(dataDir)
  return current === undefined ? undefined : { current }
}

/** `secretKeys`: default, the key kept in `dataDir` (`secret-key`) if there is one; else settings in clear. */
export interface SqliteStoreOptions
  extends SqliteDatabaseOptions,
    Pick<StoreCoreOptions, 'dedupeWindowMs' | 'secretKeys'> {}

function sqliteSql(db: SqliteDatabase, turns: { yieldTurn: () => Promise<void> }): StoreSql<'sqlite'> {
  // Ingest hands what it stored to the profile worker's next read of the log (ingest-handoff.ts).
  const handoff = new IngestHandoff()
  return {
    kind: 'sqlite',
    migrations: sqliteMigrations(db),
    ping: () => db.sql('SELECT 1 AS ok').get() !== undefined,
    close: () => db.close(),
    sources: sqliteSources(db),
    destinations: sqliteDestinations(db),
    messages: sqliteMessages(db),
    deliveries: sqliteDeliveries(db),
    deliveryBatches: sqliteDeliveryBatches(db),
    attempts: sqliteAttempts(db),
    endpointStates: sqliteEndpointStates(db),
    operationalEvents: sqliteOperationalEvents(db),
    sweep: sqliteSweep(db, () => turns.yieldTurn()),
    regulations: sqliteRegulations(db),
    tokens: sqliteTokens(db),
    rollups: sqliteRollups(db),
    profiles: sqliteProfiles(db, handoff),
    computations: sqliteComputations(db),
    config: sqliteConfig(db),
    replays: sqliteReplays(db),
    ingest: sqliteIngest(db, handoff),
    claimDeliveries: sqliteClaimDeliveries(db),
    recordOutcomes: sqliteRecordOutcomes(db),
  }
}

export class SqliteStore extends StoreCore<'sqlite'> {
  readonly path: string

  /**
   * No write-key cache: an indexed lookup here costs microseconds. (The threaded store caches on the
   * main thread, where a lookup is a thread hop.)
   */
  readonly #db: SqliteDatabase
  readonly #turns: { yieldTurn: () => Promise<void> }

  constructor(options: SqliteStoreOptions) {
    const db = new SqliteDatabase(options)
    const turns = { yieldTurn: async () => {} }
    super(sqliteSql(db, turns), {
      dedupeWindowMs: options.dedupeWindowMs,
      // A store opened on a data directory without a key given (CLI tools, tests) uses the one kept there.
      secretKeys: options.secretKeys ?? keyFileKeys(options.dataDir),
      profileRules,
    })
    this.path = db.path
    this.#db = db
    this.#turns = turns
  }

  /**
   * Called between two chunks of a long call (the retention sweep): the store worker lets the calls
   * that arrived meanwhile run. Default: nothing (in-process, other calls run between awaits anyway).
   */
  set yieldTurn(yieldTurn: () => Promise<void>) {
    this.#turns.yieldTurn = yieldTurn
  }

  /** Also checkpoints: what the migration resealed leaves no copy in clear in the database file. */
  override async migrate(): Promise<void> {
    await super.migrate()
    this.#db.checkpoint()
  }
}
