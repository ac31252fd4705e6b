/**
 * What can be done with audiences, for every caller (management API, CLI): definitions are checked
 * against the computed traits and audiences that exist (the 400 names the node at fault), the key is
 * derived from the name once, and reads carry the audience's size.
 */

import { type Audience, type AudienceNode, audienceNotFound, checkDefinition } from './audiences.ts'
import { computedKeyTaken, snakeCase } from './computed-traits.ts'
import type { DeliveryStore } from './delivery-store.ts'
import { ValidationError } from './errors.ts'
import { cleanName } from './names.ts'
import type { AudiencePatch, ProfileStore } from './profile-store.ts'
import type { ProfileIdentities } from './profiles.ts'

export interface NewAudienceInput {
  name: string
  /** The tree; checked in depth here. */
  definition: unknown
  /** Destinations that receive `{key: true|false}` identify calls. Default none. */
  destinationIds?: string[]
  /** Members without a userId are synced too (with their anonymousId). Default false. */
  includeAnonymous?: boolean
}

export interface AudienceWithSize {
  audience: Audience
  /** Current members. */
  size: number
}

/** Members per page of `GET /audiences/:id/members`. */
export const AUDIENCE_MEMBERS_PAGE_SIZE = { default: 50, max: 500 } as const

/** Profile ids a preview shows. */
export const PREVIEW_SAMPLE_SIZE = 20

export class AudienceService {
  private readonly store: ProfileStore & DeliveryStore

  constructor(store: ProfileStore & DeliveryStore) {
    this.store = store
  }

  async create(input: NewAudienceInput): Promise<AudienceWithSize> {
    const name = cleanName(input.name)
    const key = snakeCase(name)
    if (key === '') {
      throw new ValidationError(
        '/name',
        'The name needs at least one letter or digit: it becomes the trait key.',
      )
    }
    const definition = await this.checked(input.definition, key)
    const destinationIds = await existingDestinations(this.store, input.destinationIds ?? [])
    const audience = await this.store.createAudience({
      name,
      key,
      definition,
      destinationIds,
      includeAnonymous: input.includeAnonymous ?? false,
    })
    if (audience === null) throw computedKeyTaken(key)
    return { audience, size: 0 }
  }

  /** Size and a sample of who the definition holds for now; nothing is saved. */
  async preview(input: {
    definition: unknown
    includeAnonymous?: boolean
  }): Promise<{ size: number; sample: string[]; sampleMembers: ProfileIdentities[] }> {
    const definition = await this.checked(input.definition, null)
    const preview = await this.store.previewAudience(definition, {
      includeAnonymous: input.includeAnonymous ?? false,
      sampleSize: PREVIEW_SAMPLE_SIZE,
    })
    return { ...preview, sampleMembers: await this.store.profileIdentities(preview.sample) }
  }

  /** A page of the audience's current members with their ids; `after`: the previous page's `nextCursor`. */
  async members(
    id: string,
    page: { limit?: number; after?: string },
  ): Promise<{ members: ProfileIdentities[]; nextCursor: string | null }> {
    const { audience } = await this.get(id)
    const limit = page.limit ?? AUDIENCE_MEMBERS_PAGE_SIZE.default
    const ids = await this.store.listComputationHolders(audience.id, { limit, after: page.after })
    return {
      members: await this.store.profileIdentities(ids),
      nextCursor: ids.length === limit ? ids.at(-1)! : null,
    }
  }

  /** Oldest first. */
  async list(): Promise<AudienceWithSize[]> {
    return Promise.all((await this.store.listAudiences()).map((audience) => this.withSize(audience)))
  }

  async get(id: string): Promise<AudienceWithSize> {
    const audience = await this.store.getAudience(id)
    if (audience === null) throw audienceNotFound(id)
    return this.withSize(audience)
  }

  /**
   * The name (the key stays), the destinations (a destination added receives every member), the
   * definition and includeAnonymous (computed over history again; only memberships that change are
   * sent) and `enabled` (false: neither evaluated nor synced; true: on again, a failed one retried).
   */
  async update(
    id: string,
    changes: {
      name?: string
      destinationIds?: string[]
      enabled?: boolean
      definition?: unknown
      includeAnonymous?: boolean
    },
  ): Promise<AudienceWithSize> {
    const patch: AudiencePatch = {}
    if (changes.name !== undefined) patch.name = cleanName(changes.name)
    if (changes.destinationIds !== undefined) {
      patch.destinationIds = await existingDestinations(this.store, changes.destinationIds)
    }
    if (changes.enabled !== undefined) patch.enabled = changes.enabled
    if (changes.includeAnonymous !== undefined) patch.includeAnonymous = changes.includeAnonymous
    if (changes.definition !== undefined) {
      const current = await this.store.getAudience(id)
      if (current === null) throw audienceNotFound(id)
      patch.definition = await this.checked(changes.definition, current.key)
    }
    const updated = await this.store.updateAudience(id, patch)
    if (updated === null) throw audienceNotFound(id)
    return this.withSize(updated)
  }

  /** With its memberships; nothing is sent to destinations. */
  async delete(id: string): Promise<void> {
    if (!(await this.store.deleteAudience(id))) throw audienceNotFound(id)
  }

  private async checked(definition: unknown, ownKey: string | null): Promise<AudienceNode> {
    const computedTraitKeys = new Set((await this.store.listComputedTraits()).map((trait) => trait.key))
    const audiences = new Map(
      (await this.store.listAudiences()).map((audience) => [audience.key, audience.definition]),
    )
    return checkDefinition(definition, { computedTraitKeys, audiences, ownKey })
  }

  private async withSize(audience: Audience): Promise<AudienceWithSize> {
    return { audience, size: await this.store.computationSize(audience.id) }
  }
}

/** The ids as given, each an existing destination (a 400 names the first that is not). */
export async function existingDestinations(store: DeliveryStore, ids: string[]): Promise<string[]> {
  const known = new Set((await store.listDestinations()).map((destination) => destination.id))
  ids.forEach((id, index) => {
    if (!known.has(id)) {
      throw new ValidationError(
        `/destinationIds/${index}`,
        `No destination has id "${id}". List them with GET /api/v1/destinations.`,
      )
    }
  })
  return [...new Set(ids)]
}
