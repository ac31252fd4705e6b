/**
 * JSON Schemas of the sources routes, and the types derived from them.
 */
import {
  ADMIN_SECURITY,
  authErrors,
  commonErrors,
  deleted,
  idParams,
  type ResponseShape,
  resourceName,
  timestamp,
  withNotFound,
} from './common-schemas.ts'
import { seriesQuerystring, seriesResponse } from './series-query.ts'

const source = {
  type: 'object',
  required: ['id', 'name', 'writeKey', 'enabled', 'createdAt', 'stats'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    writeKey: {
      type: 'string',
      description:
        'Authenticates Tracking API calls: HTTP Basic user name (empty password), or `writeKey` in the body.',
    },
    enabled: { type: 'boolean', description: 'A disabled source refuses Tracking API calls with 401.' },
    createdAt: timestamp,
    stats: {
      type: 'object',
      required: ['accepted', 'duplicates', 'rejected', 'suppressed'],
      properties: {
        accepted: {
          type: 'integer',
          description:
            'Messages stored and routed (and those a deletion request made after they were received erased as they were committed).',
        },
        duplicates: { type: 'integer', description: 'Messages dropped as repeats of a recent messageId.' },
        rejected: { type: 'integer', description: 'Messages refused by per-message validation.' },
        suppressed: {
          type: 'integer',
          description: 'Messages acknowledged and dropped because their user is suppressed.',
        },
      },
    },
  },
} as const

/** A source as the API shows it. */
export type SourceView = ResponseShape<typeof source>

const sourceTags = ['Sources']

export const createSourceSchema = {
  tags: sourceTags,
  summary: 'Create a source',
  description: 'Creates a source with a new, unguessable write key.',
  security: ADMIN_SECURITY,
  body: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: { name: resourceName, enabled: { type: 'boolean', default: true } },
  },
  response: { 201: { ...source, description: 'The new source, with its write key.' }, ...commonErrors },
} as const

export const listSourcesSchema = {
  tags: sourceTags,
  summary: 'List sources',
  security: ADMIN_SECURITY,
  response: {
    200: {
      description: 'Every source, oldest first.',
      type: 'object',
      required: ['sources'],
      properties: { sources: { type: 'array', items: source } },
    },
    ...authErrors,
  },
} as const

export const getSourceSchema = {
  tags: sourceTags,
  summary: 'Get a source and its counters',
  security: ADMIN_SECURITY,
  params: idParams,
  response: { 200: { ...source, description: 'The source.' }, ...withNotFound },
} as const

export const updateSourceSchema = {
  tags: sourceTags,
  summary: 'Update a source',
  description:
    'Changes only the properties given. `rotateWriteKey: true` replaces the write key; the old one stops working at once.',
  security: ADMIN_SECURITY,
  params: idParams,
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      name: resourceName,
      enabled: { type: 'boolean' },
      rotateWriteKey: { type: 'boolean', description: 'When true, a new write key replaces the old one.' },
    },
  },
  response: { 200: { ...source, description: 'The updated source.' }, ...withNotFound },
} as const

export const rotateWriteKeySchema = {
  tags: sourceTags,
  summary: "Rotate a source's write key",
  description: 'Replaces the write key with a new one; the old key stops authenticating at once.',
  security: ADMIN_SECURITY,
  params: idParams,
  response: { 200: { ...source, description: 'The source with its new write key.' }, ...withNotFound },
} as const

export const deleteSourceSchema = {
  tags: sourceTags,
  summary: 'Delete a source',
  description: 'Deletes the source, its connections to destinations, and its stored messages and deliveries.',
  security: ADMIN_SECURITY,
  params: idParams,
  response: { 204: deleted, ...withNotFound },
} as const

export const sourceSeriesSchema = {
  tags: sourceTags,
  summary: "A source's calls over time",
  description:
    'Per step: the calls the source stored (`accepted`; duplicates and refused calls are not counted), by the minute they were received. Answered from per-minute figures the ingest keeps as it commits, so a week comes back in milliseconds.',
  security: ADMIN_SECURITY,
  params: idParams,
  querystring: seriesQuerystring,
  response: {
    200: seriesResponse({
      required: ['at', 'accepted'],
      properties: { at: timestamp, accepted: { type: 'integer', description: 'Calls stored in the step.' } },
    }),
    ...withNotFound,
  },
} as const
