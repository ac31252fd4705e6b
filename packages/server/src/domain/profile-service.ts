/**
 * What can be read about profiles, for every caller (management API, CLI): a profile by id or by one
 * of its identities, and its calls page by page.
 */

import { ValidationError } from './errors.ts'
import type { ProfileStore } from './profile-store.ts'
import {
  noProfileWithIdentity,
  PROFILE_EVENTS_PAGE_SIZE,
  PROFILE_SEARCH_LIMIT,
  type Profile,
  type ProfileEvent,
  type ProfileIdentities,
  profileNotFound,
} from './profiles.ts'

export interface ProfileLookup {
  userId?: string
  anonymousId?: string
}

export interface ProfileEventsPage {
  /** Newest first. */
  events: ProfileEvent[]
  /** The `before` of the next page; null on the last page. */
  nextCursor: number | null
}

export class ProfileService {
  private readonly store: ProfileStore

  constructor(store: ProfileStore) {
    this.store = store
  }

  /** The profile holding exactly one of `userId` or `anonymousId`. */
  async find({ userId, anonymousId }: ProfileLookup): Promise<Profile> {
    if ((userId === undefined) === (anonymousId === undefined)) {
      throw new ValidationError(
        userId === undefined ? '/userId' : '/anonymousId',
        'Give exactly one of userId or anonymousId, e.g. GET /api/v1/profiles?userId=user-42.',
      )
    }
    const identity = userId !== undefined ? { userId } : { anonymousId: anonymousId! }
    const profile = await this.store.findProfile(identity)
    if (profile === null) throw noProfileWithIdentity(identity)
    return profile
  }

  /** A profile by id; the id of a profile merged into another gives the survivor. */
  async get(id: string): Promise<Profile> {
    const profile = await this.store.getProfile(id)
    if (profile === null) throw profileNotFound(id)
    return profile
  }

  /** `limit` 1 to PROFILE_EVENTS_PAGE_SIZE.max (default .default); `before`: the previous page's nextCursor. */
  async events(
    id: string,
    { limit, before }: { limit?: number; before?: number },
  ): Promise<ProfileEventsPage> {
    const profile = await this.get(id)
    const page = await this.store.listProfileEvents(profile.id, {
      limit: limit ?? PROFILE_EVENTS_PAGE_SIZE.default,
      before,
    })
    return { events: page.events, nextCursor: page.next }
  }

  /** Profiles with a userId or anonymousId containing `text` (at least 2 characters), by profile id. */
  async search(text: string, limit: number = PROFILE_SEARCH_LIMIT.default): Promise<ProfileIdentities[]> {
    const needle = text.trim()
    if (needle.length < 2) {
      throw new ValidationError('/q', 'Type at least 2 characters of a user id or anonymous id to search.')
    }
    return this.store.profileIdentities(await this.store.searchProfiles(needle, limit))
  }
}
