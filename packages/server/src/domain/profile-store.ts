/**
 * What profiles, computed traits and audiences ask of storage: the profile worker's steps (each one
 * transaction), profile reads and erasure, and the computations' definitions, values and previews. One
 * area of the store contract (store/store.ts, with its conventions); the store implements it in
 * store/core/profiles.ts, running the profile module's rules (profile/) inside its transactions.
 */
import type { Audience, AudienceNode } from './audiences.ts'
import type { ComputedTrait } from './computed-traits.ts'
import type { Profile, ProfileEvent, ProfileIdentities, ProfileIdentity } from './profiles.ts'

/** A computed trait to create (the domain has checked it); the store adds id, status and times. */
export type NewComputedTrait = Omit<ComputedTrait, 'id' | 'status' | 'error' | 'createdAt' | 'updatedAt'>

/** An audience to create (the domain has checked its definition). */
export type NewAudience = Omit<Audience, 'id' | 'status' | 'error' | 'lastSyncAt' | 'createdAt' | 'updatedAt'>

/** Of a computed trait or an audience. */
export interface ComputedTraitPatch {
  name?: string
  destinationIds?: string[]
  /** false: disabled (neither evaluated nor synced); true: enabled again (a failed one is retried). */
  enabled?: boolean
  /** A new definition: computed over history again; only values that change are sent. */
  definition?: Pick<ComputedTrait, 'kind' | 'event' | 'property' | 'where' | 'withinDays'>
}

export interface AudiencePatch {
  name?: string
  destinationIds?: string[]
  /** As for computed traits. */
  enabled?: boolean
  /** A new definition: computed over history again; only memberships that change are sent. */
  definition?: AudienceNode
  includeAnonymous?: boolean
}

export interface ProfileStore {
  // --- profiles ---
  /**
   * The profile worker's step: consumes up to `limit` (default 500) committed messages that profiles
   * have not consumed yet, in one transaction with the profile cursor, so a crash loses nothing and
   * nothing is consumed twice. Returns how many were consumed: 0 when there were none, or when another
   * process (PostgreSQL) consumed the same ones first.
   */
  consumeIntoProfiles(limit?: number, now?: number): Promise<number>
  /** A profile by id; a profile merged into another answers with the survivor. */
  getProfile(id: string): Promise<Profile | null>
  findProfile(identity: ProfileIdentity): Promise<Profile | null>
  /** The profile's calls, newest first; `before` is the `next` of the previous page. */
  listProfileEvents(
    profileId: string,
    page: { limit: number; before?: number | undefined },
  ): Promise<{ events: ProfileEvent[]; next: number | null }>
  /**
   * Erasure: deletes the profiles holding one of these userIds — only those with a call from one of
   * `sourceIds`, when given — with their identities, traits and calls. Nothing is sent for them.
   * Returns how many profiles went.
   */
  eraseProfilesOfUsers(userIds: string[], sourceIds?: string[]): Promise<number>

  // --- computed traits and audiences ---
  /**
   * Creates it and queues every profile with a call of its event for evaluation (the backfill: status
   * `computing` until the queue has drained). Null when its key is taken.
   */
  createComputedTrait(input: NewComputedTrait): Promise<ComputedTrait | null>
  /** Oldest first. */
  listComputedTraits(): Promise<ComputedTrait[]>
  getComputedTrait(id: string): Promise<ComputedTrait | null>
  /**
   * Name, destinations, definition, enabled (see ComputedTraitPatch); its profiles are queued again, so
   * a new destination receives every value and a new definition is computed over history.
   */
  updateComputedTrait(id: string, patch: ComputedTraitPatch): Promise<ComputedTrait | null>
  /** With its values and sent state. Nothing is sent. */
  deleteComputedTrait(id: string): Promise<boolean>
  /**
   * Creates it and queues every profile for evaluation (the backfill: status `computing` until the
   * queue has drained). Null when its key is taken (by an audience or a computed trait).
   */
  createAudience(input: NewAudience): Promise<Audience | null>
  /** Oldest first. */
  listAudiences(): Promise<Audience[]>
  getAudience(id: string): Promise<Audience | null>
  /** As updateComputedTrait; every profile is queued again. */
  updateAudience(id: string, patch: AudiencePatch): Promise<Audience | null>
  /** With its memberships and sent state. Nothing is sent. */
  deleteAudience(id: string): Promise<boolean>
  /**
   * How many profiles a definition holds for now (identified ones only unless `includeAnonymous`),
   * with up to `sampleSize` of their ids; nothing is saved. Reads every profile.
   */
  previewAudience(
    definition: AudienceNode,
    options: { includeAnonymous: boolean; sampleSize: number },
  ): Promise<{ size: number; sample: string[] }>
  /** How many profiles have a value of this computed trait, or are members of this audience. */
  computationSize(id: string): Promise<number>
  /** Up to `limit` ids of this audience's members (or a computed trait's holders) after `after`, by id. */
  listComputationHolders(id: string, page: { limit: number; after?: string | undefined }): Promise<string[]>
  /** The user and anonymous ids of these profiles (sorted), in the order given; unknown ids are left out. */
  profileIdentities(profileIds: string[]): Promise<ProfileIdentities[]>
  /** Up to `limit` ids of profiles with a userId or anonymousId containing `text`, by id. */
  searchProfiles(text: string, limit: number): Promise<string[]>
  /**
   * Evaluates up to `limit` (default 500) queued profiles: current values, and an identify delivery to
   * each destination whose last sent value differs, all committed together with the queue entries'
   * removal. Announces `deliveries` when it created some.
   */
  evaluateComputations(
    limit?: number,
    now?: number,
  ): Promise<{ evaluated: number; deliveriesCreated: number }>
  /**
   * Queues the profiles with a call that left a trait's `withinDays` window between `after` and
   * `upTo` (epoch ms). Returns how many were queued.
   */
  queueWindowEdges(after: number, upTo: number): Promise<number>
}
