/**
 * What each backend provides to the shared store core (store-core.ts): its SQL, table by table, behind
 * one typed interface. `sqlite/sql/*.ts` and `postgres/sql/*.ts` implement it module for module, under
 * the same file names. A function here runs its statements and returns rows; a function that writes
 * several statements runs them in one transaction of its own. Everything that is not SQL — ids, row ⇄
 * record mapping, stats, the sweep loop, change announcements, caches — is the core's.
 *
 * SQLite answers synchronously and PostgreSQL asynchronously, hence `Awaitable`: the core awaits both.
 */

import type { SourceMinute } from '../../domain/series.ts'
import type { SourceStats } from '../../domain/sources.ts'
import type {
  AcceptedMessage,
  DeliveryCountFilter,
  DeliveryListFilter,
  IngestOutcome,
  ReplayFilter,
  Store,
} from '../store.ts'
import type { ComputationsSql } from './computation-sql.ts'
import type { SourceBatch } from './ingest-plan.ts'
import type { ProfilesSql } from './profile-sql.ts'
import type { NotificationCountRow, RegulationRow, SuppressionRow } from './regulation-rows.ts'
import type { MinuteRow } from './rollups.ts'
import type {
  AttemptRow,
  BacklogRow,
  ClaimRow,
  ConnectionRow,
  DeliveryRow,
  DestinationRow,
  MessageRow,
  OutcomeRows,
  SourceRow,
  StateCountRow,
  TokenRow,
} from './rows.ts'

export type Awaitable<T> = T | Promise<T>

export interface StoreSql<Kind extends Store['kind'] = Store['kind']> {
  readonly kind: Kind
  migrations: MigrationsSql
  ping(): Awaitable<boolean>
  close(): Awaitable<void>

  sources: SourcesSql
  destinations: DestinationsSql
  messages: MessagesSql
  deliveries: DeliveriesSql
  attempts: AttemptsSql
  sweep: SweepSql
  regulations: RegulationsSql
  tokens: TokensSql
  rollups: RollupsSql
  profiles: ProfilesSql
  computations: ComputationsSql

  // The hot statements, one module each.
  /**
   * Stores `messages` (at least one) in one transaction, as `plan` groups them (ingest-plan.ts: repeats
   * inside the batch are already left out of `firsts`). A first occurrence whose (source, messageId)
   * was received after `duplicatesAfter` (by this store or, for PostgreSQL, any process) is a
   * duplicate too. The rest are stored with a delivery for every enabled destination connected to
   * their source whose type is in their `routeTo`, each source's accepted and duplicate counters
   * grow (duplicates = `total` - stored), and so do its per-minute figures (source_rollups: stored
   * calls by minute of receipt).
   */
  ingest(
    messages: AcceptedMessage[],
    plan: SourceBatch[],
    now: number,
    duplicatesAfter: number,
  ): Awaitable<IngestOutcome>
  /** Leases up to `limit` (≥ 1) due deliveries of a destination until `leaseUntil`; any order. */
  claimDeliveries(
    destinationId: string,
    limit: number,
    now: number,
    leaseUntil: number,
  ): Awaitable<ClaimRow[]>
  /**
   * New states (leases released) and attempts, in one transaction. Gone deliveries get no attempts.
   * Then each of `claims` (limits ≥ 1) as `claimDeliveries` makes it, in the same transaction where
   * the backend can: one rows list per claim.
   */
  recordOutcomes(outcomes: OutcomeRows, now: number, claims: ClaimSpec[]): Awaitable<ClaimRow[][]>
}

/** The arguments of one `claimDeliveries`. */
export interface ClaimSpec {
  destinationId: string
  limit: number
  now: number
  leaseUntil: number
}

export interface MigrationsSql {
  /** The folder of this backend's `NNN_name.sql` files. */
  readonly dir: string
  /**
   * Runs `work` alone: no other process migrates the same database meanwhile (PostgreSQL takes an
   * advisory lock; SQLite has a single writer).
   */
  exclusive(work: (statements: MigrationStatements) => Promise<void>): Promise<void>
}

export interface Migration {
  version: number
  /** The file name. */
  name: string
  sql: string
}

export interface MigrationStatements {
  /** Versions applied so far (creates the bookkeeping table when missing). */
  applied(): Awaitable<number[]>
  /** Runs the migration and records it, in one transaction. */
  apply(migration: Migration): Awaitable<void>
}

/** Fields left null are kept as they are. */
export interface SourceChange {
  name: string | null
  enabled: boolean | null
  writeKey: string | null
}

export interface SourcesSql {
  /** Returns the row as stored. */
  insert(source: Omit<SourceRow, 'enabled'> & { enabled: boolean }): Awaitable<SourceRow>
  list(): Awaitable<SourceRow[]>
  get(id: string): Awaitable<SourceRow | undefined>
  getByWriteKey(writeKey: string): Awaitable<SourceRow | undefined>
  /** Returns the row as updated, or undefined when there is no such source. */
  update(id: string, change: SourceChange): Awaitable<SourceRow | undefined>
  /** The source with its connections, messages, deliveries and attempts. */
  delete(id: string): Awaitable<boolean>
  /** Undefined when the source has no counters (yet, or no longer). */
  stats(id: string): Awaitable<SourceStats | undefined>
  countRejected(id: string, count: number): Awaitable<void>
  countSuppressed(id: string, count: number): Awaitable<void>
}

/** Fields left null are kept as they are. */
export interface DestinationChange {
  name: string | null
  enabled: boolean | null
  settings: string | null
  updatedAt: number
}

export interface DestinationsSql {
  /** The destination and its connections (unknown source ids are skipped), in one transaction. */
  insert(row: Omit<DestinationRow, 'enabled'> & { enabled: boolean }, sourceIds: string[]): Awaitable<void>
  list(): Awaitable<DestinationRow[]>
  get(id: string): Awaitable<DestinationRow | undefined>
  /** Of one destination, or of all; ordered by source id. */
  connections(destinationId?: string): Awaitable<ConnectionRow[]>
  /**
   * Updates the destination and, when `sourceIds` is given, replaces its connections, in one
   * transaction. False when there is no such destination.
   */
  update(id: string, change: DestinationChange, sourceIds: string[] | undefined): Awaitable<boolean>
  /** The destination with its connections, deliveries and attempts. */
  delete(id: string): Awaitable<boolean>
}

export interface MessagesSql {
  /** The newest copy of a message. */
  latest(sourceId: string, messageId: string): Awaitable<MessageRow | undefined>
  count(sourceId: string | undefined): Awaitable<number>
}

export interface DeliveriesSql {
  /** Drops the leases of these deliveries (at least one). */
  release(ids: number[]): Awaitable<void>
  /** When the earliest unleased pending or retrying delivery is due, or null. */
  nextDueAt(destinationId: string, now: number): Awaitable<number | null>
  /** Newest first. */
  list(destinationId: string, filter: DeliveryListFilter): Awaitable<DeliveryRow[]>
  get(id: number): Awaitable<DeliveryRow | undefined>
  /** Final deliveries only, back to pending at `now` with a fresh window; returns how many. */
  replay(filter: ReplayFilter, now: number): Awaitable<number>
  count(filter: DeliveryCountFilter): Awaitable<number>
  countByState(destinationId: string): Awaitable<StateCountRow[]>
  /** Per destination and state (pending, retrying only): how many, and the earliest next_attempt_at. */
  backlog(): Awaitable<BacklogRow[]>
}

export interface AttemptsSql {
  /** Attempts of these deliveries (at least one), oldest first. */
  ofDeliveries(deliveryIds: number[]): Awaitable<AttemptRow[]>
  /** Latencies of the destination's `limit` most recent attempts, any order. */
  recentLatencies(destinationId: string, limit: number): Awaitable<number[]>
}

export interface SweepSql {
  /**
   * Runs `work` unless another process is sweeping the same database right now (PostgreSQL: an
   * advisory lock), in which case it resolves with null at once.
   */
  exclusive<T>(work: (statements: SweepStatements) => Promise<T>): Promise<T | null>
}

export interface SweepStatements {
  /** Up to `limit` messages by pk order, after `afterPk`. */
  messagesAfter(afterPk: number, limit: number): Awaitable<{ pk: number; received_at: number }[]>
  /**
   * Deletes those of these messages whose deliveries are all final and which profiles have consumed
   * (pk at most the profile cursor's high-water mark), with them; returns how many went.
   */
  deleteIfFinal(pks: number[]): Awaitable<number>
  /**
   * Deletes up to `limit` dedupe keys received before `before`; returns how many. Only PostgreSQL
   * keeps keys apart from messages (its `dedupe_keys`); SQLite dedupes against messages and has none.
   */
  expireDedupeKeys(before: number, limit: number): Awaitable<number>
  /**
   * Adds the shard rows of per-minute source figures for minutes before `before` into one row per
   * source and minute; returns how many rows went. Only PostgreSQL writes figures to several shards
   * (so that concurrent ingests do not queue on one row); SQLite has one row a minute and none.
   */
  foldRollupShards?(before: number): Awaitable<number>
}

/** What creating a regulation does besides storing its row (the core decides it from the type). */
export interface RegulationWork {
  userIds: string[]
  /** Null for every source. */
  sourceIds: string[] | null
  /** Suppress the users (in each of `sourceIds`, or everywhere). */
  suppress: boolean
  /** Lift the users' suppressions (in each of `sourceIds`, or all of them). */
  unsuppress: boolean
  /** Cancel the unsent deliveries of the users' messages and queue their `delete` notifications. */
  notify: boolean
}

export interface RegulationsSql {
  /**
   * The row and its `work`, in one transaction: a crash after it returns loses nothing. Notifications
   * are planned with `planNotifications` (regulation-rows.ts). Returns how many deliveries it queued.
   */
  create(row: RegulationRow, work: RegulationWork): Awaitable<number>
  get(id: string): Awaitable<RegulationRow | undefined>
  /** Newest first. */
  list(status: string | undefined, limit: number): Awaitable<RegulationRow[]>
  /** Delivery-status counts of these regulations' notifications (at least one id), by destination. */
  notificationCounts(regulationIds: string[]): Awaitable<NotificationCountRow[]>
  suppressions(): Awaitable<SuppressionRow[]>
  /** How many regulations there are and the newest one's creation time (regulations are never deleted). */
  version(): Awaitable<{ n: number; newest: number | null }>
  /** Deleting regulations created after `since`, or with erasure pending. */
  recentErasures(since: number): Awaitable<RegulationRow[]>
  /**
   * One transaction: takes the oldest regulation with erasure pending (PostgreSQL: SKIP LOCKED), deletes
   * up to `limit` of its users' messages received up to its creation in its sources, with their
   * deliveries and attempts, adds them to its count, and clears `erasure_pending` when fewer than
   * `limit` were left. Null when no regulation has erasure pending (or all are being erased elsewhere).
   */
  eraseNext(limit: number): Awaitable<{ id: string; erased: number; done: boolean } | null>
  /** Deleting regulations whose messages are erased and whose profiles are not yet. */
  profileErasuresDue(): Awaitable<RegulationRow[]>
  /** Records the profiles erased (the largest count wins, should two processes race). */
  recordErasedProfiles(id: string, count: number): Awaitable<void>
  /** Regulations not finished, oldest first. */
  unfinished(): Awaitable<RegulationRow[]>
  /** A new status; `outcome` and `finishedAt` only when it is final. */
  setStatus(id: string, status: string, finishedAt: number | null, outcome: string | null): Awaitable<void>
}

export interface RollupsSql {
  /** Up to where attempts are rolled up (exclusive, a minute boundary); null before the first roll-up. */
  through(): Awaitable<number | null>
  /** When the oldest stored attempt was made; null when there is none. */
  earliestAttempt(): Awaitable<number | null>
  /**
   * Rolls attempts of `[from, to)` up (rows already there are kept) and moves the progress to `to`, in
   * one transaction. Returns the rows written.
   */
  rollUp(from: number, to: number): Awaitable<number>
  /** Rolled-up minutes of one destination in `[from, to)`. */
  rows(destinationId: string, from: number, to: number): Awaitable<MinuteRow[]>
  /** The same figures computed from the attempts themselves (for minutes not rolled up yet). */
  live(destinationId: string, from: number, to: number): Awaitable<MinuteRow[]>
  /** source_rollups of one source in `[from, to)`, a row per minute, oldest first. */
  sourceMinutes(sourceId: string, from: number, to: number): Awaitable<SourceMinute[]>
}

export interface TokensSql {
  insert(row: TokenRow): Awaitable<void>
  /** Oldest first. */
  list(): Awaitable<TokenRow[]>
  get(id: string): Awaitable<TokenRow | undefined>
  getByHash(tokenHash: string): Awaitable<TokenRow | undefined>
  touch(id: string, at: number): Awaitable<void>
  delete(id: string): Awaitable<boolean>
}
