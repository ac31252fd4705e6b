/**
 * What each backend provides to the shared store core: its SQL, table by table. Each table's SQL
 * interface is in its module under ../tables/ (with its rows and their mapping); `sqlite/sql/*.ts` and
 * `postgres/sql/*.ts` implement them module for module, under the same file names, and each backend's
 * store lists its modules once (SqliteStore, PostgresStore). A function here runs its statements and
 * returns rows; a function that writes several statements runs them in one transaction of its own.
 * Everything that is not SQL — ids, row ⇄ record mapping, change announcements, caches — is the core's.
 */
import type { Store } from '../store.ts'
import type { AttemptsSql } from '../tables/attempts.ts'
import type { ComputationsSql } from '../tables/computations.ts'
import type { ConfigSql } from '../tables/config.ts'
import type { ClaimDeliveriesSql, DeliveriesSql, RecordOutcomesSql } from '../tables/deliveries.ts'
import type { DeliveryBatchesSql } from '../tables/delivery-batches.ts'
import type { DestinationsSql } from '../tables/destinations.ts'
import type { EndpointStatesSql } from '../tables/endpoint-states.ts'
import type { IngestSql, MessagesSql } from '../tables/messages.ts'
import type { OperationalEventsSql } from '../tables/operational-events.ts'
import type { ProfilesSql } from '../tables/profiles.ts'
import type { RegulationsSql } from '../tables/regulations.ts'
import type { ReplaysSql } from '../tables/replays.ts'
import type { RollupsSql } from '../tables/rollups.ts'
import type { SourcesSql } from '../tables/sources.ts'
import type { Awaitable } from '../tables/sql-types.ts'
import type { TokensSql } from '../tables/tokens.ts'
import type { MigrationsSql } from './migrations.ts'
import type { SweepSql } from './sweep.ts'

export interface StoreSql<Kind extends Store['kind'] = Store['kind']> {
  readonly kind: Kind
  migrations: MigrationsSql
  ping(): Awaitable<boolean>
  close(): Awaitable<void>
  sweep: SweepSql

  sources: SourcesSql
  destinations: DestinationsSql
  messages: MessagesSql
  deliveries: DeliveriesSql
  deliveryBatches: DeliveryBatchesSql
  attempts: AttemptsSql
  endpointStates: EndpointStatesSql
  operationalEvents: OperationalEventsSql
  regulations: RegulationsSql
  tokens: TokensSql
  rollups: RollupsSql
  profiles: ProfilesSql
  computations: ComputationsSql
  replays: ReplaysSql
  /** Configuration as code's one transaction over sources, destinations and computations. */
  config: ConfigSql

  // The hot statements, one module each.
  ingest: IngestSql
  claimDeliveries: ClaimDeliveriesSql
  recordOutcomes: RecordOutcomesSql
}
