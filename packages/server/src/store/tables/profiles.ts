/**
 * The profile tables: `profiles`, `profile_identities` (which userIds and anonymousIds each holds),
 * `profile_events` (the calls consumed into each), `profile_merges` (where a merged profile went) and
 * `profile_cursor` (how far the message log is consumed). Each backend moves rows in and out, and
 * applies a whole batch — planned by the profile module's identity resolution — in one transaction
 * together with the cursor.
 */
import type { Profile, ProfileEvent } from '../../domain/profiles.ts'
import type { MessageRow } from './messages.ts'
import type { Awaitable } from './sql-types.ts'

export type IdentityKind = 'user' | 'anonymous'

export interface ProfileCursorRow {
  /** Every message with a pk up to here is consumed, except those in `gaps`. */
  high_pk: number
  /** JSON `[[fromPk, toPk, seenAt], …]`: pk ranges skipped because nothing was committed there yet. */
  gaps: string
  /** Bumped by every write to profiles (batches, erasure). */
  version: number
}

export interface ProfileRow {
  id: string
  /** JSON object. */
  traits: string
  /** JSON object: trait → timestamp (ms) of the call that set it. */
  trait_times: string
  first_seen_at: number
  last_seen_at: number
  /**
   * PostgreSQL: how many merges went into this profile. A fold kept by another process is stale
   * once it moved (the merged calls keep their older marks). SQLite has one process and no column.
   */
  merged_in?: number
}

export interface IdentityRow {
  kind: IdentityKind
  value: string
  profile_id: string
  /** Timestamp (ms) of the call that linked it. */
  linked_at: number
}

export interface ProfileEventRow {
  message_pk: number
  profile_id: string
  source_id: string
  message_id: string
  type: string
  event: string | null
  occurred_at: number
  /** JSON object. */
  properties: string
}

/**
 * A profile merged into another: its identities, events and old merges move to `into_id`; it goes, with
 * its computed values, sent state and queue entry (the survivor is evaluated again).
 */
export interface MergeRow {
  from_id: string
  into_id: string
}

/** One batch's changes, applied in one transaction. */
export interface ProfileWrites {
  /** The cursor after the batch; the batch applies only if the cursor's version is still `readVersion`. */
  cursor: { highPk: number; gaps: string; readVersion: number }
  /** Applied first, in order. */
  merges: MergeRow[]
  /** Inserted or replaced (after the merges). */
  profiles: ProfileRow[]
  /** Inserted or moved to their profile. */
  identities: IdentityRow[]
  /** Inserted; a message already recorded is left as it is. */
  events: ProfileEventRow[]
  /** Profiles whose computed traits must be evaluated again (queued in profile_dirty). */
  dirty: string[]
}

export interface ProfilesSql {
  cursor(): Awaitable<ProfileCursorRow>
  /** Messages with `afterPk` < pk ≤ `upToPk` (no upper bound when null), by pk, at most `limit`. */
  messages(afterPk: number, upToPk: number | null, limit: number): Awaitable<MessageRow[]>
  /** The identities of one kind among `values`. */
  identities(kind: IdentityKind, values: string[]): Awaitable<IdentityRow[]>
  /** Every identity of these profiles. */
  identitiesOf(profileIds: string[]): Awaitable<IdentityRow[]>
  profiles(ids: string[]): Awaitable<ProfileRow[]>
  /** Up to `limit` profiles with ids after `afterId` (from the first when null), by id. */
  page(afterId: string | null, limit: number): Awaitable<ProfileRow[]>
  /** Up to `limit` ids of profiles with a userId or anonymousId containing `text`, by id. */
  search(text: string, limit: number): Awaitable<string[]>
  /** The profile's id, or the id it was merged into, or undefined. */
  resolve(id: string): Awaitable<string | undefined>
  /** False (and nothing written) when the cursor's version moved since it was read. */
  apply(writes: ProfileWrites): Awaitable<boolean>
  /** Newest first, pks below `beforePk` when given. */
  events(profileId: string, limit: number, beforePk: number | null): Awaitable<ProfileEventRow[]>
  /**
   * Deletes the profiles holding one of these userIds (only those with a call from one of `sourceIds`,
   * when given) with their identities, events, merges, computed values, sent state and queue entries,
   * and bumps the cursor's version; how many. Nothing is sent for them.
   */
  erase(userIds: string[], sourceIds: string[] | null): Awaitable<number>
}

/** The profile with its identities (computed traits and audiences are the caller's to add). */
export function toProfile(row: ProfileRow, identities: IdentityRow[]): Profile {
  const of = (kind: IdentityKind) =>
    identities
      .filter((identity) => identity.kind === kind)
      .map((identity) => identity.value)
      .sort()
  return {
    id: row.id,
    userIds: of('user'),
    anonymousIds: of('anonymous'),
    traits: JSON.parse(row.traits) as Record<string, unknown>,
    computedTraits: {},
    audiences: [],
    firstSeenAt: row.first_seen_at,
    lastSeenAt: row.last_seen_at,
  }
}

export function toProfileEvent(row: ProfileEventRow): ProfileEvent {
  return {
    sourceId: row.source_id,
    messageId: row.message_id,
    type: row.type,
    event: row.event,
    timestamp: row.occurred_at,
    properties: JSON.parse(row.properties) as Record<string, unknown>,
  }
}
