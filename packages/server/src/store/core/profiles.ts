/**
 * The profiles-and-computations area of the store core (domain/profile-store.ts): profile reads and
 * erasure, computed traits and audiences as records, and the profile worker's steps — whose rules
 * (identity resolution, evaluation, previews, time windows) are the profile module's, handed in as
 * `ProfileRules` (profile-rules.ts) and run here over this store's SQL, inside its transactions.
 */
import type { Audience, AudienceNode } from '../../domain/audiences.ts'
import type { ComputedTrait } from '../../domain/computed-traits.ts'
import type {
  AudiencePatch,
  ComputedTraitPatch,
  NewAudience,
  NewComputedTrait,
  ProfileStore,
} from '../../domain/profile-store.ts'
import type { Profile, ProfileEvent, ProfileIdentities, ProfileIdentity } from '../../domain/profiles.ts'
import { newId } from '../../lib/ids.ts'
import {
  type ComputationClass,
  type ComputationRow,
  newComputationRow,
  toAudience,
  toComputations,
  toComputedTrait,
} from '../tables/computations.ts'
import { type IdentityKind, toProfile, toProfileEvent } from '../tables/profiles.ts'
import type { Changes } from './changes.ts'
import type { ComputationPatch, ProfileRules } from './profile-rules.ts'
import type { StoreSql } from './store-sql.ts'

/** Messages consumed (or queued profiles evaluated) per transaction when the caller does not say. */
export const DEFAULT_PROFILE_BATCH = 500

/** The SQL this area runs. */
type ProfileTables = Pick<StoreSql, 'profiles' | 'computations'>

export class ProfilesCore implements ProfileStore {
  readonly #sql: ProfileTables
  readonly #rules: ProfileRules
  readonly #changes: Changes

  constructor(sql: ProfileTables, rules: ProfileRules, changes: Changes) {
    this.#sql = sql
    this.#rules = rules
    this.#changes = changes
  }

  // --- profiles ---

  consumeIntoProfiles(limit = DEFAULT_PROFILE_BATCH, now = Date.now()): Promise<number> {
    return this.#rules.consume(limit, now)
  }

  async getProfile(id: string): Promise<Profile | null> {
    const resolved = await this.#sql.profiles.resolve(id)
    if (resolved === undefined) return null
    const [row] = await this.#sql.profiles.profiles([resolved])
    if (!row) return null
    const profile = toProfile(row, await this.#sql.profiles.identitiesOf([resolved]))
    const computations = new Map((await this.#sql.computations.list()).map((row) => [row.id, row]))
    for (const value of await this.#sql.computations.values([profile.id])) {
      const computation = computations.get(value.computation_id)
      if (computation?.class === 'computed_trait') {
        profile.computedTraits[computation.key] = JSON.parse(value.value)
      } else if (computation?.class === 'audience') profile.audiences.push(computation.key)
    }
    profile.audiences.sort()
    return profile
  }

  async findProfile(identity: ProfileIdentity): Promise<Profile | null> {
    const [kind, value]: [IdentityKind, string] =
      'userId' in identity ? ['user', identity.userId] : ['anonymous', identity.anonymousId]
    const [row] = await this.#sql.profiles.identities(kind, [value])
    return row ? this.getProfile(row.profile_id) : null
  }

  async listProfileEvents(
    profileId: string,
    page: { limit: number; before?: number | undefined },
  ): Promise<{ events: ProfileEvent[]; next: number | null }> {
    const rows = await this.#sql.profiles.events(profileId, page.limit, page.before ?? null)
    return {
      events: rows.map(toProfileEvent),
      next: rows.length === page.limit ? rows.at(-1)!.message_pk : null,
    }
  }

  async eraseProfilesOfUsers(userIds: string[], sourceIds?: string[]): Promise<number> {
    if (userIds.length === 0 || sourceIds?.length === 0) return 0
    const erased = await this.#sql.profiles.erase(userIds, sourceIds ?? null)
    this.#rules.callsErased()
    return erased
  }

  // --- computed traits and audiences ---

  async createComputedTrait(input: NewComputedTrait): Promise<ComputedTrait | null> {
    const { name, key, destinationIds, ...definition } = input
    const row = newComputationRow(
      'computed_trait',
      { id: newId('ctr'), name, key, destinationIds, now: Date.now() },
      definition,
    )
    return (await this.#insert(row)) ? toComputedTrait(row) : null
  }

  async listComputedTraits(): Promise<ComputedTrait[]> {
    return toComputations(await this.#sql.computations.list()).traits
  }

  async getComputedTrait(id: string): Promise<ComputedTrait | null> {
    const row = await this.#computation(id, 'computed_trait')
    return row ? toComputedTrait(row) : null
  }

  async updateComputedTrait(id: string, patch: ComputedTraitPatch): Promise<ComputedTrait | null> {
    const { definition, ...rest } = patch
    return (await this.#update(id, 'computed_trait', () => ({
      ...rest,
      ...(definition === undefined ? {} : { definition }),
    })))
      ? this.getComputedTrait(id)
      : null
  }

  async deleteComputedTrait(id: string): Promise<boolean> {
    return (
      (await this.#computation(id, 'computed_trait')) !== null && (await this.#sql.computations.delete(id))
    )
  }

  async createAudience(input: NewAudience): Promise<Audience | null> {
    const { name, key, destinationIds, definition, includeAnonymous } = input
    const row = newComputationRow(
      'audience',
      { id: newId('aud'), name, key, destinationIds, now: Date.now() },
      { tree: definition, includeAnonymous },
    )
    return (await this.#insert(row)) ? toAudience(row) : null
  }

  async listAudiences(): Promise<Audience[]> {
    return toComputations(await this.#sql.computations.list()).audiences
  }

  async getAudience(id: string): Promise<Audience | null> {
    const row = await this.#computation(id, 'audience')
    return row ? toAudience(row) : null
  }

  async updateAudience(id: string, patch: AudiencePatch): Promise<Audience | null> {
    const { definition, includeAnonymous, ...rest } = patch
    const patchOf = (row: ComputationRow): ComputationPatch => {
      if (definition === undefined && includeAnonymous === undefined) return rest
      const audience = toAudience(row)
      return {
        ...rest,
        definition: {
          tree: definition ?? audience.definition,
          includeAnonymous: includeAnonymous ?? audience.includeAnonymous,
        },
      }
    }
    return (await this.#update(id, 'audience', patchOf)) ? this.getAudience(id) : null
  }

  async deleteAudience(id: string): Promise<boolean> {
    return (await this.#computation(id, 'audience')) !== null && (await this.#sql.computations.delete(id))
  }

  previewAudience(
    definition: AudienceNode,
    options: { includeAnonymous: boolean; sampleSize: number },
  ): Promise<{ size: number; sample: string[] }> {
    return this.#rules.previewAudience(definition, options, Date.now())
  }

  async computationSize(id: string): Promise<number> {
    return this.#sql.computations.size(id)
  }

  async listComputationHolders(
    id: string,
    page: { limit: number; after?: string | undefined },
  ): Promise<string[]> {
    return this.#sql.computations.holders(id, page.after ?? null, page.limit)
  }

  async profileIdentities(profileIds: string[]): Promise<ProfileIdentities[]> {
    if (profileIds.length === 0) return []
    const rows = await this.#sql.profiles.identitiesOf(profileIds)
    const of = (profileId: string, kind: IdentityKind) =>
      rows
        .filter((row) => row.profile_id === profileId && row.kind === kind)
        .map((row) => row.value)
        .sort()
    return profileIds
      .filter((profileId) => rows.some((row) => row.profile_id === profileId))
      .map((profileId) => ({
        profileId,
        userIds: of(profileId, 'user'),
        anonymousIds: of(profileId, 'anonymous'),
      }))
  }

  async searchProfiles(text: string, limit: number): Promise<string[]> {
    return this.#sql.profiles.search(text, limit)
  }

  async evaluateComputations(
    limit = DEFAULT_PROFILE_BATCH,
    now = Date.now(),
  ): Promise<{ evaluated: number; deliveriesCreated: number }> {
    const result = await this.#rules.evaluate(limit, now)
    if (result.deliveriesCreated > 0) this.#changes.committed('deliveries')
    return result
  }

  queueWindowEdges(after: number, upTo: number): Promise<number> {
    return this.#rules.queueWindowEdges(after, upTo)
  }

  /** Inserts it with its backfill queued, in one transaction; false when its key is taken. */
  async #insert(row: ComputationRow): Promise<boolean> {
    return this.#sql.computations.insert(row, this.#rules.backfill(row))
  }

  async #computation(id: string, computationClass: ComputationClass): Promise<ComputationRow | null> {
    const row = await this.#sql.computations.get(id)
    return row?.class === computationClass ? row : null
  }

  /**
   * A patch is applied to the row as it is when written: made from the row read, and written only if
   * no other update changed that row since, else made again from the new one. Two PATCHes at once then
   * both take effect, in some order, instead of the later one writing back every field as it read it;
   * and one that leaves the status alone keeps what evaluation made of it meanwhile (live, failed).
   */
  async #update(
    id: string,
    computationClass: ComputationClass,
    patchOf: (row: ComputationRow) => ComputationPatch,
  ): Promise<boolean> {
    for (;;) {
      const row = await this.#computation(id, computationClass)
      if (row === null) return false
      // Strictly later than the row's stamp, so the next change can tell this one happened.
      const now = Math.max(Date.now(), row.updated_at + 1)
      const { change, scope } = this.#rules.change(row, patchOf(row), now)
      if (await this.#sql.computations.update(id, change, scope, row)) return true
    }
  }
}
