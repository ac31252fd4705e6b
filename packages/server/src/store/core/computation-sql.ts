/**
 * What each backend provides for computed traits and audiences (`sqlite/sql/computations.ts`,
 * `postgres/sql/computations.ts`): definitions, the dirty-profile queue, current values, the last value
 * sent per destination, and one transaction that applies an evaluation together with the sync
 * deliveries it decided. The evaluation itself is the core's (computations.ts).
 */
import type { ProfileEventRow } from './profile-sql.ts'

/** SQLite answers synchronously, PostgreSQL asynchronously (as in store-sql.ts). */
type Awaitable<T> = T | Promise<T>

/** Sync messages are stored under this (disabled, hidden) source; see 004_profiles.sql. */
export const COMPUTED_SOURCE_ID = 'src_sluice_computed'

export type ComputationClass = 'computed_trait' | 'audience'

/** A computed trait or an audience. */
export interface ComputationRow {
  id: string
  class: ComputationClass
  name: string
  key: string
  /** JSON, per class. */
  definition: string
  /** JSON array. */
  destination_ids: string
  /** computing | live | disabled | failed */
  status: string
  /** Why it failed (status `failed`), else null. */
  error: string | null
  last_sync_at: number | null
  created_at: number
  updated_at: number
}

/** Which profiles a new or changed computation queues: those with a call of one of these events, all, or none. */
export type QueueScope = { events: string[] } | 'all' | 'none'

/** What an update writes besides the id. */
export interface ComputationChange {
  name: string
  destination_ids: string
  definition: string
  status: string
  error: string | null
  updated_at: number
}

export interface DirtyRow {
  profile_id: string
  seq: number
}

export interface ValueRow {
  computation_id: string
  profile_id: string
  /** JSON. */
  value: string
}

export interface SentRow extends ValueRow {
  destination_id: string
}

/** A stored identify carrying a computed value, with a delivery to each of `destination_ids`. */
export interface SyncMessageRow {
  computation_id: string
  message_id: string
  payload: string
  destination_ids: string[]
}

export interface EvaluationWrites {
  /**
   * The queue entries evaluated. If any is gone or has a newer seq (another process evaluated it, or
   * a new call marked it again), nothing is written and `apply` answers false.
   */
  done: DirtyRow[]
  setValues: ValueRow[]
  clearValues: { computation_id: string; profile_id: string }[]
  sent: SentRow[]
  /** Each also sets its computation's last_sync_at to `now`. */
  messages: SyncMessageRow[]
  /** Computations whose evaluation threw: they become `failed` with this error (and stop evaluating). */
  failed: { computation_id: string; error: string }[]
  now: number
}

/** Thrown inside `apply` to roll its transaction back when the evaluation is stale; `apply` answers false. */
export class StaleEvaluation extends Error {}

/**
 * A call with its mark: a number that grows in the order calls were consumed into profiles, so that
 * every call consumed after a reader saw mark M has a mark above M. SQLite: the message pk (one
 * writer: messages become visible in pk order). PostgreSQL: the profile cursor's version of the
 * consuming transaction (pks are drawn before commit, so a lower pk can be consumed later; the
 * cursor's version serializes consumption).
 */
export type MarkedEventRow = ProfileEventRow & { mark: number }

export interface ComputationsSql {
  /** Oldest first. */
  list(): Awaitable<ComputationRow[]>
  get(id: string): Awaitable<ComputationRow | undefined>
  /** Inserts it and queues `queue`'s profiles (the backfill), in one transaction. False when the key is taken. */
  insert(row: ComputationRow, queue: QueueScope): Awaitable<boolean>
  /**
   * Name, destinations, definition and status, and queues `queue`'s profiles again (a new destination
   * gets every value, a new definition is computed over history), in one transaction.
   */
  update(id: string, change: ComputationChange, queue: QueueScope): Awaitable<boolean>
  /** The computation with its values and sent state. */
  delete(id: string): Awaitable<boolean>
  /** Computations whose backfill queue has drained become live. */
  markLive(ids: string[]): Awaitable<void>
  /** How many profiles have a value (for an audience: members). */
  size(id: string): Awaitable<number>
  /** Queues these profiles (again). */
  markDirty(profileIds: string[]): Awaitable<void>
  /** Profiles with a call of `event` timestamped in (`after`, `upTo`]: those a window edge passed. */
  profilesWithEventsBetween(event: string, after: number, upTo: number): Awaitable<string[]>
  /** Up to `limit` queued profiles. */
  dirty(limit: number): Awaitable<DirtyRow[]>
  /** The calls of these profiles whose event is one of `events`. */
  eventsOf(profileIds: string[], events: string[]): Awaitable<MarkedEventRow[]>
  /**
   * The calls of each profile after its mark whose event is one of `events` (see MarkedEventRow):
   * exactly the calls a fold that read up to that mark has not seen.
   */
  eventsAfter(marks: [profileId: string, afterMark: number][], events: string[]): Awaitable<MarkedEventRow[]>
  values(profileIds: string[]): Awaitable<ValueRow[]>
  sent(profileIds: string[]): Awaitable<SentRow[]>
  apply(writes: EvaluationWrites): Awaitable<boolean>
}
