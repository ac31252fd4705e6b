/**
 * The PostgreSQL store: the same contract as the SQLite store, for several Sluice processes (any
 * number of API and worker processes, on any number of machines) sharing one database. Its SQL is in
 * `sql/` (one module per table, and one per hot statement), under the shared core, which is handed the
 * profile module's rules here (profile/store-rules.ts); connections, transactions and retries in
 * database.ts; cross-process announcements in notifications.ts.
 *
 * What changes with several processes, and how it is handled:
 * - Migrations: run under a PostgreSQL advisory lock, so processes starting together apply each
 *   migration exactly once (sql/migrations.ts).
 * - Dedupe: a `dedupe_keys` table whose primary key arbitrates between concurrent API processes
 *   (sql/ingest.ts).
 * - Claims: `FOR UPDATE SKIP LOCKED` plus a lease, so two workers never take the same delivery and a
 *   dead worker's deliveries come back when the lease runs out (sql/claim-deliveries.ts).
 * - Announcements: this process's commits reach its own listeners at once (the shared core) and the
 *   other processes by NOTIFY, sent after the commit; one LISTEN connection per store hears theirs.
 *   Polling remains the fallback.
 * - Write keys: cached only while that LISTEN connection is up, since only then is every other
 *   process's source change heard.
 * - Round trips: ingest and outcome recording are each ONE statement (data-modifying CTEs over
 *   `unnest`ed arrays), so a batch costs one round trip and one commit whatever its size.
 */

import type { Source } from '../../domain/sources.ts'
import { profileRules } from '../../profile/store-rules.ts'
import { StoreCore } from '../core/store-core.ts'
import type { StoreSql } from '../core/store-sql.ts'
import type { StoreEvent } from '../store.ts'
import { type PostgresStoreOptions, SILENT_LOGGER } from './connection.ts'
import { PostgresDatabase } from './database.ts'
import { ChangeChannel } from './notifications.ts'
import { postgresAttempts } from './sql/attempts.ts'
import { postgresClaimDeliveries } from './sql/claim-deliveries.ts'
import { postgresComputations } from './sql/computations.ts'
import { postgresConfig } from './sql/config.ts'
import { postgresDeliveries } from './sql/deliveries.ts'
import { postgresDeliveryBatches } from './sql/delivery-batches.ts'
import { postgresDestinations } from './sql/destinations.ts'
import { postgresEndpointStates } from './sql/endpoint-states.ts'
import { postgresIngest } from './sql/ingest.ts'
import { postgresMessages } from './sql/messages.ts'
import { postgresMigrations } from './sql/migrations.ts'
import { postgresOperationalEvents } from './sql/operational-events.ts'
import { postgresProfiles } from './sql/profiles.ts'
import { postgresRecordOutcomes } from './sql/record-outcomes.ts'
import { postgresRegulations } from './sql/regulations.ts'
import { postgresReplays } from './sql/replays.ts'
import { postgresRollups } from './sql/rollups.ts'
import { postgresSources } from './sql/sources.ts'
import { postgresSweep } from './sql/sweep.ts'
import { postgresTokens } from './sql/tokens.ts'

export type { PostgresStoreOptions } from './connection.ts'

function postgresSql(db: PostgresDatabase): StoreSql<'postgres'> {
  return {
    kind: 'postgres',
    migrations: postgresMigrations(db),
    ping: async () => {
      try {
        return (await db.query<{ ok: number }>('SELECT 1 AS ok')).length === 1
      } catch {
        return false
      }
    },
    close: () => db.end(),
    sources: postgresSources(db),
    destinations: postgresDestinations(db),
    messages: postgresMessages(db),
    deliveries: postgresDeliveries(db),
    deliveryBatches: postgresDeliveryBatches(db),
    attempts: postgresAttempts(db),
    endpointStates: postgresEndpointStates(db),
    operationalEvents: postgresOperationalEvents(db),
    sweep: postgresSweep(db),
    regulations: postgresRegulations(db),
    tokens: postgresTokens(db),
    rollups: postgresRollups(db),
    profiles: postgresProfiles(db),
    computations: postgresComputations(db),
    config: postgresConfig(db),
    replays: postgresReplays(db),
    ingest: postgresIngest(db),
    claimDeliveries: postgresClaimDeliveries(db),
    recordOutcomes: postgresRecordOutcomes(db),
  }
}

export class PostgresStore extends StoreCore<'postgres'> {
  private readonly channel: ChangeChannel
  private readonly db: PostgresDatabase
  private closed = false

  constructor(options: PostgresStoreOptions) {
    const db = new PostgresDatabase(options, options.logger ?? SILENT_LOGGER)
    const channel = new ChangeChannel(db)
    super(postgresSql(db), {
      dedupeWindowMs: options.dedupeWindowMs,
      secretKeys: options.secretKeys,
      publish: (event) => channel.publish(event),
      // Off until the LISTEN connection is up (listen()): other processes' source changes are only
      // heard through it.
      writeKeyCache: { trusted: false },
      profileRules,
    })
    this.channel = channel
    this.db = db
  }

  override async migrate(): Promise<void> {
    await super.migrate()
    await this.db.warnIfCommitsAreNotDurable()
  }

  override getSourceByWriteKey(writeKey: string): Promise<Source | null> {
    void this.listen()
    return super.getSourceByWriteKey(writeKey)
  }

  override async watch(listener: (event: StoreEvent) => void): Promise<() => Promise<void>> {
    const unwatch = await super.watch(listener)
    await this.listen()
    return unwatch
  }

  /** Backend pids of the LISTEN connection (tests cut it to check the reconnect). */
  listenerPids(): number[] {
    const pid = this.channel.listenerPid
    return pid === null ? [] : [pid]
  }

  override async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.channel.close()
    await super.close()
  }

  /** Hears other processes' changes from now on (one LISTEN connection, opened on first need). */
  private listen(): Promise<void> {
    return this.channel.listen({
      onEvent: (event) => this.changes.heard(event),
      onState: (connected) => {
        // Whatever was announced while disconnected is lost: cached write keys may be stale, and there
        // may be work and destination changes to pick up. So drop the cache, and on every
        // (re)connection look for work and re-read destinations.
        this.writeKeys?.trust(connected)
        if (!connected) return
        this.changes.heard('config')
        this.changes.heard('deliveries')
        this.changes.heard('privacy')
      },
    })
  }
}
