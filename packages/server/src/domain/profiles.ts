import { NotFoundError } from './errors.ts'

/**
 * Profiles: one per person, built from the calls Sluice accepted in every source. A call's `userId`
 * and `anonymousId` are its identities; calls sharing one land on the same profile.
 */

export interface Profile {
  /** `prf_…`. A profile merged into another keeps answering under its old id with the survivor. */
  id: string
  userIds: string[]
  anonymousIds: string[]
  /** Identify traits merged over time: for each trait, the call with the latest `timestamp` wins. */
  traits: Record<string, unknown>
  /** Computed trait key → its current value (traits with no value for this profile are left out). */
  computedTraits: Record<string, unknown>
  /** Keys of the audiences the profile is a member of, sorted. */
  audiences: string[]
  firstSeenAt: number
  lastSeenAt: number
}

/** One call of a profile, as the profile keeps it. */
export interface ProfileEvent {
  sourceId: string
  messageId: string
  type: string
  /** Track calls only. */
  event: string | null
  /** The call's `timestamp`, epoch ms. */
  timestamp: number
  /** Track, page and screen properties; identify and group traits; `{}` otherwise. */
  properties: Record<string, unknown>
}

/** Who a profile is: its ids, sorted. */
export interface ProfileIdentities {
  profileId: string
  userIds: string[]
  anonymousIds: string[]
}

/** How a profile is looked up by one of its identities. */
export type ProfileIdentity = { userId: string } | { anonymousId: string }

export function profileNotFound(id: string): NotFoundError {
  return new NotFoundError(
    'profile_not_found',
    `No profile has id "${id}". Find one by identity with GET /api/v1/profiles?userId=… or ?anonymousId=….`,
  )
}

export function noProfileWithIdentity(identity: ProfileIdentity): NotFoundError {
  const [kind, value] =
    'userId' in identity ? ['userId', identity.userId] : ['anonymousId', identity.anonymousId]
  return new NotFoundError(
    'profile_not_found',
    `No profile has ${kind} "${value}" yet. Profiles are built from accepted calls within a second or so of their acceptance.`,
  )
}

/** Profiles one search answers with. */
export const PROFILE_SEARCH_LIMIT = { default: 20, max: 100 } as const

/** Profile events per page of `GET /profiles/:id/events`. */
export const PROFILE_EVENTS_PAGE_SIZE = { default: 50, max: 500 } as const
