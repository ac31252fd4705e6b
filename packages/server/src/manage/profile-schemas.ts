/**
 * JSON Schemas of the profile routes, and the types derived from them.
 */
import { PROFILE_EVENTS_PAGE_SIZE, PROFILE_SEARCH_LIMIT } from '../domain/profiles.ts'
import { MAX_ID_LENGTH } from '../ingest/limits.ts'
import {
  ADMIN_SECURITY,
  commonErrors,
  idParams,
  MAX_CURSOR,
  type ResponseShape,
  timestamp,
  wholeNumberQuery,
  withNotFound,
} from './common-schemas.ts'

const freeForm = { type: 'object', additionalProperties: true } as const

const profile = {
  type: 'object',
  required: [
    'id',
    'userIds',
    'anonymousIds',
    'traits',
    'computedTraits',
    'audiences',
    'firstSeenAt',
    'lastSeenAt',
  ],
  properties: {
    id: {
      type: 'string',
      description: 'A merged profile answers under its old ids with this, the surviving id.',
    },
    userIds: { type: 'array', items: { type: 'string' } },
    anonymousIds: { type: 'array', items: { type: 'string' } },
    traits: {
      ...freeForm,
      description: 'Identify traits, merged; per trait the call with the latest timestamp wins.',
    },
    computedTraits: { ...freeForm, description: 'Computed trait key → current value.' },
    audiences: { type: 'array', items: { type: 'string' }, description: 'Keys of the audiences it is in.' },
    firstSeenAt: { ...timestamp, description: 'The earliest call timestamp.' },
    lastSeenAt: { ...timestamp, description: 'The latest call timestamp.' },
  },
} as const

const profileEvent = {
  type: 'object',
  required: ['sourceId', 'messageId', 'type', 'event', 'timestamp', 'properties'],
  properties: {
    sourceId: { type: 'string' },
    messageId: { type: 'string' },
    type: { type: 'string' },
    event: { type: ['string', 'null'], description: 'The event name of a track call; null otherwise.' },
    timestamp,
    properties: { ...freeForm, description: 'Track, page and screen properties; identify and group traits.' },
  },
} as const

/** Who a profile is, for lists (search results, audience members). */
export const profileIdentities = {
  type: 'object',
  required: ['profileId', 'userIds', 'anonymousIds'],
  properties: {
    profileId: { type: 'string', description: 'The profile id, `prf_…`.' },
    userIds: { type: 'array', items: { type: 'string' }, description: 'Sorted.' },
    anonymousIds: { type: 'array', items: { type: 'string' }, description: 'Sorted.' },
  },
} as const

export type ProfileIdentitiesView = ResponseShape<typeof profileIdentities>
export type ProfileView = ResponseShape<typeof profile>
export type ProfileEventView = ResponseShape<typeof profileEvent>

const profileTags = ['Profiles']
const profileIdParams = {
  ...idParams,
  properties: { id: { type: 'string', description: 'The profile id, `prf_…`.' } },
} as const

export const findProfileSchema = {
  tags: profileTags,
  summary: 'Find a profile by userId or anonymousId',
  description:
    'Profiles are built from accepted calls by the profile worker, usually within a second of acceptance.',
  security: ADMIN_SECURITY,
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      userId: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_ID_LENGTH,
        description: 'Give this or anonymousId.',
      },
      anonymousId: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_ID_LENGTH,
        description: 'Give this or userId.',
      },
    },
  },
  response: { 200: { ...profile, description: 'The profile holding that identity.' }, ...withNotFound },
} as const

export const searchProfilesSchema = {
  tags: profileTags,
  summary: 'Search profiles by part of an id',
  description:
    'Profiles with a userId or anonymousId containing `q` (case sensitive), by profile id, at most `limit`.',
  security: ADMIN_SECURITY,
  querystring: {
    type: 'object',
    additionalProperties: false,
    required: ['q'],
    properties: {
      q: { type: 'string', maxLength: MAX_ID_LENGTH, description: 'At least 2 characters of an id.' },
      limit: wholeNumberQuery({
        minimum: 1,
        maximum: PROFILE_SEARCH_LIMIT.max,
        default: PROFILE_SEARCH_LIMIT.default,
        description: `How many profiles at most, 1 to ${PROFILE_SEARCH_LIMIT.max}.`,
      }),
    },
  },
  response: {
    200: {
      description: 'The profiles found.',
      type: 'object',
      required: ['profiles'],
      properties: { profiles: { type: 'array', items: profileIdentities } },
    },
    ...commonErrors,
  },
} as const

export const getProfileSchema = {
  tags: profileTags,
  summary: 'Get a profile',
  security: ADMIN_SECURITY,
  params: profileIdParams,
  response: { 200: { ...profile, description: 'The profile.' }, ...withNotFound },
} as const

export const listProfileEventsSchema = {
  tags: profileTags,
  summary: "Page a profile's calls",
  description:
    'Newest first (by acceptance). Page with `before`: pass the `nextCursor` of the previous page.',
  security: ADMIN_SECURITY,
  params: profileIdParams,
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: wholeNumberQuery({
        minimum: 1,
        maximum: PROFILE_EVENTS_PAGE_SIZE.max,
        default: PROFILE_EVENTS_PAGE_SIZE.default,
        description: `How many calls per page, 1 to ${PROFILE_EVENTS_PAGE_SIZE.max}.`,
      }),
      before: wholeNumberQuery({
        minimum: 1,
        maximum: MAX_CURSOR,
        description: "The previous page's `nextCursor`.",
      }),
    },
  },
  response: {
    200: {
      description: 'A page of calls.',
      type: 'object',
      required: ['events', 'nextCursor'],
      properties: {
        events: { type: 'array', items: profileEvent },
        nextCursor: {
          type: ['integer', 'null'],
          description: 'Pass as `before` for the next page; null on the last.',
        },
      },
    },
    ...withNotFound,
  },
} as const
