/**
 * JSON Schemas of the privacy routes (`/regulations`, `/suppressions`), and the types derived from them.
 */
import {
  REGULATION_PAGE_SIZE,
  REGULATION_STATUSES,
  REGULATION_TYPES,
  SUBJECT_IDS_MAX,
  SUBJECT_TYPE,
} from '../domain/regulations.ts'
import { MAX_ID_LENGTH } from '../ingest/limits.ts'
import {
  ADMIN_SECURITY,
  authErrors,
  commonErrors,
  idParams,
  nullableTimestamp,
  type ResponseShape,
  timestamp,
  wholeNumberQuery,
  withNotFound,
} from './common-schemas.ts'

const regulationStatus = {
  type: 'string',
  enum: REGULATION_STATUSES,
  description:
    'INITIALIZED (recorded) → RUNNING (erasing, or `delete` notifications not final) → FINISHED (all delivered), PARTIAL_SUCCESS (some dead-lettered) or FAILED (none delivered).',
} as const

const regulation = {
  type: 'object',
  required: [
    'id',
    'regulationType',
    'subjectType',
    'subjectIds',
    'sourceIds',
    'status',
    'createdAt',
    'finishedAt',
    'destinations',
    'erased',
  ],
  properties: {
    id: { type: 'string' },
    regulationType: { type: 'string', enum: REGULATION_TYPES },
    subjectType: { type: 'string', enum: [SUBJECT_TYPE] },
    subjectIds: { type: 'array', items: { type: 'string' } },
    sourceIds: {
      type: ['array', 'null'],
      items: { type: 'string' },
      description: 'The sources it applies to; null for every source.',
    },
    status: regulationStatus,
    createdAt: timestamp,
    finishedAt: nullableTimestamp,
    destinations: {
      type: 'array',
      description: 'Per destination that gets `delete` notifications: how many were delivered or failed.',
      items: {
        type: 'object',
        required: ['destinationId', 'status', 'delivered', 'failed'],
        properties: {
          destinationId: { type: 'string' },
          status: regulationStatus,
          delivered: { type: 'integer' },
          failed: { type: 'integer' },
        },
      },
    },
    erased: {
      type: 'object',
      required: ['messages', 'profiles'],
      properties: {
        messages: { type: 'integer', description: 'Stored messages erased so far.' },
        profiles: { type: 'integer', description: 'Profiles erased (none are stored yet).' },
      },
    },
  },
} as const

/** A regulation as the API shows it. */
export type RegulationView = ResponseShape<typeof regulation>

const suppression = {
  type: 'object',
  required: ['userId', 'sourceId', 'regulationId', 'createdAt'],
  properties: {
    userId: { type: 'string' },
    sourceId: { type: ['string', 'null'], description: 'Null: suppressed in every source.' },
    regulationId: { type: 'string', description: 'The request that suppressed it.' },
    createdAt: timestamp,
  },
} as const

export type SuppressionView = ResponseShape<typeof suppression>

const privacyTags = ['Privacy']

export const createRegulationSchema = {
  tags: privacyTags,
  summary: 'Create a regulation (delete, suppress or unsuppress users)',
  description:
    'DELETE_ONLY and SUPPRESS_WITH_DELETE erase the users’ stored messages in the sources and send one `delete` notification per user to every enabled Webhooks destination connected to a source the user sent calls to; SUPPRESS_ONLY and SUPPRESS_WITH_DELETE drop the users’ later calls (acknowledged, never stored); UNSUPPRESS lifts that. Everything the answer promises is committed before it is sent.',
  security: ADMIN_SECURITY,
  body: {
    type: 'object',
    required: ['regulationType', 'subjectIds'],
    additionalProperties: false,
    properties: {
      regulationType: { type: 'string', enum: REGULATION_TYPES },
      subjectType: { type: 'string', enum: [SUBJECT_TYPE], default: SUBJECT_TYPE },
      subjectIds: {
        type: 'array',
        minItems: 1,
        maxItems: SUBJECT_IDS_MAX,
        items: { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH },
        description: `1 to ${SUBJECT_IDS_MAX} user ids (the calls' \`userId\`), each at most ${MAX_ID_LENGTH} characters (the longest the Tracking API accepts).`,
      },
      sourceIds: {
        type: 'array',
        minItems: 1,
        items: { type: 'string' },
        description: 'Only these sources. Default: every source (for suppressions, future ones too).',
      },
    },
  },
  response: { 201: { ...regulation, description: 'The regulation, recorded.' }, ...commonErrors },
} as const

export const listRegulationsSchema = {
  tags: privacyTags,
  summary: 'List regulations',
  security: ADMIN_SECURITY,
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      status: { ...regulationStatus, description: 'Only regulations in this status.' },
      limit: wholeNumberQuery({
        minimum: 1,
        maximum: REGULATION_PAGE_SIZE.max,
        default: REGULATION_PAGE_SIZE.default,
        description: `The newest this many, 1 to ${REGULATION_PAGE_SIZE.max}.`,
      }),
    },
  },
  response: {
    200: {
      description: 'Regulations, newest first.',
      type: 'object',
      required: ['regulations'],
      properties: { regulations: { type: 'array', items: regulation } },
    },
    ...commonErrors,
  },
} as const

export const getRegulationSchema = {
  tags: privacyTags,
  summary: 'Get a regulation and its progress',
  security: ADMIN_SECURITY,
  params: idParams,
  response: { 200: { ...regulation, description: 'The regulation.' }, ...withNotFound },
} as const

export const listSuppressionsSchema = {
  tags: privacyTags,
  summary: 'List suppressed user ids',
  security: ADMIN_SECURITY,
  response: {
    200: {
      description: 'The suppressions in force, by user id.',
      type: 'object',
      required: ['suppressions'],
      properties: { suppressions: { type: 'array', items: suppression } },
    },
    ...authErrors,
  },
} as const
