/**
 * JSON Schemas of the dry run (`POST /destinations/dry-run`, `POST /destinations/{id}/dry-run`), and
 * the types derived from them.
 */
import { DRY_RUN_LIMITS } from '../deliver/dry-run.ts'
import { ADMIN_SECURITY, commonErrors, idParams, type ResponseShape, withNotFound } from './common-schemas.ts'
import { settingsProperties } from './destination-schemas.ts'

const time = {
  anyOf: [{ type: 'string' }, { type: 'integer' }],
  description: 'ISO 8601 (`2026-01-31T12:00:00Z`) or epoch milliseconds.',
} as const

const windowProperties = {
  limit: {
    type: 'integer',
    minimum: 1,
    maximum: DRY_RUN_LIMITS.maxCalls,
    default: DRY_RUN_LIMITS.defaultCalls,
    description: 'How many of the most recent stored calls to run over.',
  },
  from: { ...time, description: `Only calls received at or after this time. ${time.description}` },
  to: { ...time, description: `Only calls received before this time. ${time.description}` },
} as const

const dryRunResult = {
  type: 'object',
  required: ['scanned', 'matched', 'filtered', 'sampledOut', 'failed', 'samples'],
  properties: {
    scanned: { type: 'integer', description: 'Stored calls read.' },
    matched: { type: 'integer', description: 'Calls that would be delivered.' },
    filtered: { type: 'integer', description: 'Calls the subscription or a `drop` filter keeps out.' },
    sampledOut: { type: 'integer', description: 'Calls a `sample` filter leaves out.' },
    failed: {
      type: 'integer',
      description:
        'Matched calls whose body cannot be built (the mapping fails on them): their delivery would fail.',
    },
    samples: {
      type: 'array',
      maxItems: DRY_RUN_LIMITS.samples,
      description: `The first ${DRY_RUN_LIMITS.samples} matched calls, newest first, with the body each would get.`,
      items: {
        type: 'object',
        required: ['messageId'],
        properties: {
          messageId: { type: 'string' },
          body: { description: 'The body as it would be sent.' },
          error: { type: 'string', description: 'Why the body could not be built.' },
        },
      },
    },
  },
} as const

/** What a dry run answers. */
export type DryRunView = ResponseShape<typeof dryRunResult>

const tags = ['Destinations']
const description =
  'Applies subscription, filters and mapping to the most recent stored calls of the sources and answers what would be delivered. Nothing is sent or stored.'

export const dryRunSchema = {
  tags,
  summary: 'Dry-run delivery settings over recent calls',
  description,
  security: ADMIN_SECURITY,
  body: {
    type: 'object',
    required: ['sourceIds', 'settings'],
    additionalProperties: false,
    properties: {
      sourceIds: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string' } },
      settings: {
        type: 'object',
        additionalProperties: false,
        properties: settingsProperties,
        description: 'Settings as a destination takes them; `webhooks` is not required.',
      },
      ...windowProperties,
    },
  },
  response: { 200: { ...dryRunResult, description: 'What the settings would do.' }, ...commonErrors },
} as const

export const savedDryRunSchema = {
  tags,
  summary: "Dry-run a destination's saved settings over recent calls",
  description,
  security: ADMIN_SECURITY,
  params: idParams,
  body: { type: 'object', additionalProperties: false, properties: windowProperties },
  response: { 200: { ...dryRunResult, description: 'What the saved settings do.' }, ...withNotFound },
} as const
