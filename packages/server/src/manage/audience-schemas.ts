/**
 * JSON Schemas of the audience routes, and the types derived from them. The definition tree is
 * described here and checked in depth by the domain (audiences.ts), whose 400 names the node at fault.
 */

import { AUDIENCE_MEMBERS_PAGE_SIZE } from '../domain/audience-service.ts'
import {
  ADMIN_SECURITY,
  authErrors,
  commonErrors,
  deleted,
  errorResponse,
  idParams,
  nullableTimestamp,
  type ResponseShape,
  resourceName,
  timestamp,
  wholeNumberQuery,
  withNotFound,
} from './common-schemas.ts'
import { computationStatus, enabledSwitch } from './computed-trait-schemas.ts'
import { profileIdentities } from './profile-schemas.ts'

/** An audience definition; shared with the configuration document's schema. */
export const audienceDefinition = {
  type: 'object',
  additionalProperties: true,
  description:
    'A tree: `{"all": [...]}`, `{"any": [...]}`, `{"not": {...}}`, or a leaf: `{"event": "Order Completed", "where"?: [...], "count"?: {"op": ">=", "value": 1}, "withinDays"?: 30}`, `{"trait": "plan", "op": "=", "value": "pro"}`, `{"computedTrait": "orders_last_30_days", "op": ">=", "value": 3}`, `{"audience": "other_key"}`.',
} as const

const destinationIds = {
  type: 'array',
  items: { type: 'string' },
  description: 'Destinations that receive identify calls `{key: true}` on entry and `{key: false}` on exit.',
} as const

const includeAnonymous = {
  type: 'boolean',
  description: 'Also sync members without a userId (`userId: null` and their anonymousId). Default false.',
} as const

const audience = {
  type: 'object',
  required: [
    'id',
    'name',
    'key',
    'definition',
    'destinationIds',
    'includeAnonymous',
    'status',
    'error',
    'size',
    'lastSyncAt',
    'createdAt',
    'updatedAt',
  ],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    key: {
      type: 'string',
      description: 'The snake_cased name at creation: the trait receivers get. Never changes.',
    },
    definition: audienceDefinition,
    destinationIds,
    includeAnonymous,
    ...computationStatus,
    size: { type: 'integer', description: 'Current members.' },
    lastSyncAt: { ...nullableTimestamp, description: 'When an identify for it was last enqueued.' },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const

export type AudienceView = ResponseShape<typeof audience>

const tags = ['Audiences']
const audienceIdParams = {
  ...idParams,
  properties: { id: { type: 'string', description: 'The audience id, `aud_…`.' } },
} as const

export const createAudienceSchema = {
  tags,
  summary: 'Create an audience',
  description:
    'Computes membership over existing history (status `computing`, then `live`) and keeps it current. Each destination gets one identify `{key: true}` per member, then `true` on entry and `false` on exit.',
  security: ADMIN_SECURITY,
  body: {
    type: 'object',
    required: ['name', 'definition'],
    additionalProperties: false,
    properties: { name: resourceName, definition: audienceDefinition, destinationIds, includeAnonymous },
  },
  response: { 201: { ...audience, description: 'The new audience.' }, ...commonErrors, 409: errorResponse },
} as const

export const previewAudienceSchema = {
  tags,
  summary: 'Preview an audience definition',
  description: 'How many profiles it holds for now and a sample of their ids. Nothing is saved.',
  security: ADMIN_SECURITY,
  body: {
    type: 'object',
    required: ['definition'],
    additionalProperties: false,
    properties: { definition: audienceDefinition, includeAnonymous },
  },
  response: {
    200: {
      description: 'Size and sample.',
      type: 'object',
      required: ['size', 'sample', 'sampleMembers'],
      properties: {
        size: { type: 'integer' },
        sample: { type: 'array', items: { type: 'string' }, description: 'Up to 20 profile ids.' },
        sampleMembers: {
          type: 'array',
          items: profileIdentities,
          description: 'The same profiles with their user and anonymous ids, in the same order.',
        },
      },
    },
    ...commonErrors,
  },
} as const

export const listAudiencesSchema = {
  tags,
  summary: 'List audiences',
  security: ADMIN_SECURITY,
  response: {
    200: {
      description: 'Every audience, oldest first.',
      type: 'object',
      required: ['audiences'],
      properties: { audiences: { type: 'array', items: audience } },
    },
    ...authErrors,
  },
} as const

export const getAudienceSchema = {
  tags,
  summary: 'Get an audience, its status and size',
  security: ADMIN_SECURITY,
  params: audienceIdParams,
  response: { 200: { ...audience, description: 'The audience.' }, ...withNotFound },
} as const

export const listAudienceMembersSchema = {
  tags,
  summary: "Page an audience's members",
  description:
    'Current members with their ids, by profile id. Page with `after`: pass the `nextCursor` of the previous page.',
  security: ADMIN_SECURITY,
  params: audienceIdParams,
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      limit: wholeNumberQuery({
        minimum: 1,
        maximum: AUDIENCE_MEMBERS_PAGE_SIZE.max,
        default: AUDIENCE_MEMBERS_PAGE_SIZE.default,
        description: `How many members per page, 1 to ${AUDIENCE_MEMBERS_PAGE_SIZE.max}.`,
      }),
      after: { type: 'string', maxLength: 200, description: "The previous page's `nextCursor`." },
    },
  },
  response: {
    200: {
      description: 'A page of members.',
      type: 'object',
      required: ['members', 'nextCursor'],
      properties: {
        members: { type: 'array', items: profileIdentities },
        nextCursor: { type: ['string', 'null'], description: 'null on the last page.' },
      },
    },
    ...withNotFound,
  },
} as const

export const updateAudienceSchema = {
  tags,
  summary: 'Change an audience: name, destinations, definition, enabled',
  description:
    'The key never changes. A destination added receives one `true` per member. A changed `definition` or `includeAnonymous` is computed over history again (status `computing`), and only the memberships that changed are sent (`true` on entering, `false` on leaving).',
  security: ADMIN_SECURITY,
  params: audienceIdParams,
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      name: resourceName,
      destinationIds,
      enabled: enabledSwitch,
      definition: audienceDefinition,
      includeAnonymous,
    },
  },
  response: { 200: { ...audience, description: 'The audience as updated.' }, ...withNotFound },
} as const

export const deleteAudienceSchema = {
  tags,
  summary: 'Delete an audience',
  description: 'With its memberships. Nothing is sent to destinations.',
  security: ADMIN_SECURITY,
  params: audienceIdParams,
  response: { 204: deleted, ...withNotFound },
} as const
