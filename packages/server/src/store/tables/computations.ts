/**
 * The computation tables: `computations` (computed traits and audiences: their definitions and
 * status), `profile_dirty` (the queue of profiles to evaluate), `computed_values` (current values and
 * memberships) and `computed_sent` (the last value sent to each destination). Each backend moves rows
 * in and out, and applies an evaluation — decided by the profile module's rules — in one transaction
 * together with the sync deliveries it decided.
 */

import type { Audience, AudienceNode } from '../../domain/audiences.ts'
import type { ComputedTrait } from '../../domain/computed-traits.ts'
import type { GatedCall } from './destinations.ts'
import type { ProfileEventRow } from './profiles.ts'
import type { Awaitable } from './sql-types.ts'

/** Sync messages are stored under this (disabled, hidden) source; see 004_profiles.sql. */
export const COMPUTED_SOURCE_ID = 'src_sluice_computed'

export type ComputationClass = 'computed_trait' | 'audience'

/** A computed trait or an audience. */
export interface ComputationRow {
  id: string
  class: ComputationClass
  name: string
  key: string
  /** JSON, per class (TraitDefinition, AudienceDefinition). */
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

/** The `definition` column of a computed trait. */
export type TraitDefinition = Pick<ComputedTrait, 'kind' | 'event' | 'property' | 'where' | 'withinDays'>
/** The `definition` column of an audience. */
export type AudienceDefinition = { tree: AudienceNode; includeAnonymous: boolean }

/** Which profiles a new or changed computation queues: those with a call of one of these events, all, or none. */
export type QueueScope = { events: string[] } | 'all' | 'none'

/**
 * The row an update's change was made from: its `updated_at`, which every change of a field moves
 * forward, and its status, which evaluation changes without moving it (marking it live or failed).
 */
export type ComputationStamp = Pick<ComputationRow, 'updated_at' | 'status'>

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
  /**
   * The userId the identify speaks with (null: an anonymous member): stored as the message's user, so
   * that a deletion request naming the user cancels and erases it like the user's own calls.
   */
  user_id: string | null
  payload: string
  destination_ids: string[]
}

export interface EvaluationWrites {
  /**
   * The queue entries evaluated. If any is gone or has another seq (another process evaluated it, or
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
  /** Identify calls a destination's subscription or filters kept out: counted, not stored. */
  gated: (GatedCall & { computation_id: string })[]
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
   * gets every value, a new definition is computed over history), in one transaction; only if the row
   * still has the `updated_at` of `read` (the row the change was made from). A change that keeps the
   * status it read keeps the status and error the row has now (evaluation may have marked it live or
   * failed meanwhile). False when the row is gone or another update changed it since.
   */
  update(id: string, change: ComputationChange, queue: QueueScope, read: ComputationStamp): Awaitable<boolean>
  /** The computation with its values and sent state. */
  delete(id: string): Awaitable<boolean>
  /**
   * Computations whose backfill queue has drained become live: only while no profile is queued, checked
   * by the store itself, since one of `ids` may have been changed (its backfill queued) after the caller
   * saw the queue empty, or may be being changed right now (another process's transaction).
   */
  markLive(ids: string[]): Awaitable<void>
  /** How many profiles have a value (for an audience: members). */
  size(id: string): Awaitable<number>
  /** Up to `limit` ids of profiles with a value (for an audience: members) after `afterId`, by id. */
  holders(id: string, afterId: string | null, limit: number): Awaitable<string[]>
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

/** Computations as records, split by class (each list oldest first, as the rows come). */
export function toComputations(rows: ComputationRow[]): { traits: ComputedTrait[]; audiences: Audience[] } {
  return {
    traits: rows.filter((row) => row.class === 'computed_trait').map(toComputedTrait),
    audiences: rows.filter((row) => row.class === 'audience').map(toAudience),
  }
}

export function toComputedTrait(row: ComputationRow): ComputedTrait {
  const definition = JSON.parse(row.definition) as TraitDefinition
  return {
    id: row.id,
    name: row.name,
    key: row.key,
    ...definition,
    destinationIds: JSON.parse(row.destination_ids) as string[],
    status: row.status as ComputedTrait['status'],
    error: row.error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

export function toAudience(row: ComputationRow): Audience {
  const definition = JSON.parse(row.definition) as AudienceDefinition
  return {
    id: row.id,
    name: row.name,
    key: row.key,
    definition: definition.tree,
    includeAnonymous: definition.includeAnonymous,
    destinationIds: JSON.parse(row.destination_ids) as string[],
    status: row.status as Audience['status'],
    error: row.error,
    lastSyncAt: row.last_sync_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

/** A new computation's row: `definition` is the class's own part. */
export function newComputationRow(
  computationClass: ComputationClass,
  base: { id: string; name: string; key: string; destinationIds: string[]; now: number },
  definition: TraitDefinition | AudienceDefinition,
): ComputationRow {
  return {
    id: base.id,
    class: computationClass,
    name: base.name,
    key: base.key,
    definition: JSON.stringify(definition),
    destination_ids: JSON.stringify(base.destinationIds),
    status: 'computing',
    error: null,
    last_sync_at: null,
    created_at: base.now,
    updated_at: base.now,
  }
}
