/**
 * JSON Schemas of the computed-trait routes, and the types derived from them.
 */
import { COMPUTED_TRAIT_KINDS, MAX_WITHIN_DAYS, WHERE_OPERATORS } from '../domain/computed-traits.ts'
import { MAX_WHERE_CONDITIONS } from '../domain/definition-limits.ts'
import {
  ADMIN_SECURITY,
  authErrors,
  commonErrors,
  deleted,
  errorResponse,
  idParams,
  type ResponseShape,
  resourceName,
  timestamp,
  withNotFound,
} from './common-schemas.ts'

/** One `where` condition; shared with audience definitions. */
export const whereCondition = {
  type: 'object',
  required: ['property', 'op'],
  additionalProperties: false,
  properties: {
    property: {
      type: 'string',
      minLength: 1,
      description: 'A call property; a dotted path reads nested ones.',
    },
    op: { type: 'string', enum: WHERE_OPERATORS },
    value: { description: 'Compared with; a list for `in`; absent for `exists` and `not_exists`.' },
  },
} as const

const destinationIds = {
  type: 'array',
  items: { type: 'string' },
  description: 'Destinations that receive an identify call whenever the value changes.',
} as const

/** `status` and `error` of a computed trait or an audience; shared with audiences. */
export const computationStatus = {
  status: {
    type: 'string',
    enum: ['computing', 'live', 'disabled', 'failed'],
    description:
      '`computing` while values over existing history are computed, then `live`; `disabled` when switched off (`PATCH {"enabled": false}`): neither evaluated nor synced; `failed` when an evaluation failed (see `error`): it stops, the others go on, and `PATCH {"enabled": true}` or a new definition retries it.',
  },
  error: { type: ['string', 'null'], description: 'Why it failed (status `failed`), else null.' },
} as const

/** PATCH's switch; shared with audiences. */
export const enabledSwitch = {
  type: 'boolean',
  description:
    '`false` disables it (neither evaluated nor synced; its last values stay); `true` enables it again (or retries a failed one): it is computed over history again, and only values that changed since the last sent are sent.',
} as const

/** What a computed trait computes; shared with the configuration document's schema. */
export const definitionFields = {
  kind: { type: 'string', enum: COMPUTED_TRAIT_KINDS },
  event: { type: 'string', minLength: 1, description: 'The track event the calls must have.' },
  property: { type: 'string', minLength: 1, description: 'Required for every kind but `count`.' },
  where: {
    type: 'array',
    maxItems: MAX_WHERE_CONDITIONS,
    items: whereCondition,
    description: `Every condition must hold. At most ${MAX_WHERE_CONDITIONS}.`,
  },
  withinDays: {
    type: 'integer',
    minimum: 1,
    maximum: MAX_WITHIN_DAYS,
    description: 'Only calls of the last N days.',
  },
} as const

const computedTrait = {
  type: 'object',
  required: [
    'id',
    'name',
    'key',
    'kind',
    'event',
    'property',
    'where',
    'withinDays',
    'destinationIds',
    'status',
    'error',
    'createdAt',
    'updatedAt',
  ],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    key: {
      type: 'string',
      description: 'The snake_cased name at creation: the trait name receivers get. Never changes.',
    },
    kind: { type: 'string', enum: COMPUTED_TRAIT_KINDS },
    event: { type: 'string' },
    property: { type: ['string', 'null'] },
    where: { type: 'array', items: whereCondition },
    withinDays: { type: ['integer', 'null'] },
    destinationIds,
    ...computationStatus,
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const

export type ComputedTraitView = ResponseShape<typeof computedTrait>

const tags = ['Computed traits']
const traitIdParams = {
  ...idParams,
  properties: { id: { type: 'string', description: 'The computed trait id, `ctr_…`.' } },
} as const

export const createComputedTraitSchema = {
  tags,
  summary: 'Create a computed trait',
  description:
    'Computes the value over existing history for every profile (status `computing`, then `live`), then keeps it current as calls arrive. Each destination gets an identify `{key: value}` per profile with a userId, then one more whenever the value changes.',
  security: ADMIN_SECURITY,
  body: {
    type: 'object',
    required: ['name', 'kind', 'event'],
    additionalProperties: false,
    properties: { name: resourceName, ...definitionFields, destinationIds },
  },
  response: {
    201: { ...computedTrait, description: 'The new computed trait.' },
    ...commonErrors,
    409: errorResponse,
  },
} as const

export const listComputedTraitsSchema = {
  tags,
  summary: 'List computed traits',
  security: ADMIN_SECURITY,
  response: {
    200: {
      description: 'Every computed trait, oldest first.',
      type: 'object',
      required: ['computedTraits'],
      properties: { computedTraits: { type: 'array', items: computedTrait } },
    },
    ...authErrors,
  },
} as const

export const getComputedTraitSchema = {
  tags,
  summary: 'Get a computed trait',
  security: ADMIN_SECURITY,
  params: traitIdParams,
  response: { 200: { ...computedTrait, description: 'The computed trait.' }, ...withNotFound },
} as const

export const updateComputedTraitSchema = {
  tags,
  summary: 'Change a computed trait: name, destinations, definition, enabled',
  description:
    'The key never changes. A destination added receives the current value of every profile. A changed definition (any of `kind`, `event`, `property`, `where`, `withinDays`; `null` removes `property` or `withinDays`) is computed over history again (status `computing`), and only the values that differ from the last one sent are sent.',
  security: ADMIN_SECURITY,
  params: traitIdParams,
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      name: resourceName,
      destinationIds,
      enabled: enabledSwitch,
      ...definitionFields,
      property: { ...definitionFields.property, type: ['string', 'null'] },
      withinDays: { ...definitionFields.withinDays, type: ['integer', 'null'] },
    },
  },
  response: { 200: { ...computedTrait, description: 'The computed trait as updated.' }, ...withNotFound },
} as const

export const deleteComputedTraitSchema = {
  tags,
  summary: 'Delete a computed trait',
  description: 'With its values. Nothing is sent to destinations.',
  security: ADMIN_SECURITY,
  params: traitIdParams,
  response: { 204: deleted, ...withNotFound },
} as const
