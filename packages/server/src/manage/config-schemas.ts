/**
 * JSON Schemas of configuration as code: the document (published at `/api/config.schema.json` so
 * editors validate it, and built from the same pieces as the routes that create each object, so a
 * setting added there appears here) and the export, plan and apply routes.
 */
import { CONFIG_VERSION, type SettingsFields } from '../domain/config-document.ts'
import { DESTINATION_TYPES } from '../domain/destinations.ts'
import { audienceDefinition } from './audience-schemas.ts'
import { ADMIN_SECURITY, authErrors, errorResponse, resourceName } from './common-schemas.ts'
import { definitionFields } from './computed-trait-schemas.ts'
import { settingsProperties } from './destination-schemas.ts'

export const CONFIG_SCHEMA_PATH = '/api/config.schema.json'

/** The destination settings' members, and which are secrets (`writeOnly` in their schema). */
export const SETTINGS_FIELDS: SettingsFields = {
  names: Object.keys(settingsProperties),
  secrets: Object.entries(settingsProperties)
    .filter(([, schema]) => (schema as { writeOnly?: boolean }).writeOnly === true)
    .map(([name]) => name),
}

const secretPlaceholder = {
  type: 'object',
  required: ['$secret'],
  additionalProperties: false,
  properties: { $secret: { type: 'string' } },
  description: 'The secret Sluice has is kept (exports show secrets so unless asked for them).',
} as const

const environmentSecret = {
  type: 'object',
  required: ['$env'],
  additionalProperties: false,
  properties: { $env: { type: 'string', minLength: 1 } },
  description: 'Read from this environment variable by the sluice CLI, which sends its value.',
} as const

function secret(schema: object) {
  return { anyOf: [schema, secretPlaceholder, environmentSecret] }
}

/** Where a setting takes a string, a document may give `{"$env": NAME}` instead (the CLI replaces it). */
function allowEnvironment(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(allowEnvironment)
  if (typeof schema !== 'object' || schema === null) return schema
  const walked = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, key === 'enum' ? value : allowEnvironment(value)]),
  )
  const { type } = schema as { type?: unknown }
  const takesString = type === 'string' || (Array.isArray(type) && type.includes('string'))
  return takesString ? { anyOf: [walked, environmentSecret] } : walked
}

const names = (what: string) => ({
  type: 'array',
  uniqueItems: true,
  items: { type: 'string' },
  description: `Names of ${what} in this document (or kept in Sluice).`,
})

const enabled = { type: 'boolean', default: true } as const

const computationKey = {
  type: 'string',
  pattern: '^[a-z0-9]+(_[a-z0-9]+)*$',
  description: 'The trait name receivers get; never changes. For a new one, default: the snake_cased name.',
} as const

const sourceSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled,
    writeKey: secret({
      type: 'string',
      minLength: 16,
      maxLength: 256,
      description: 'Left out: kept (a new source gets a generated one).',
    }),
  },
}

const destinationSchema = {
  type: 'object',
  required: ['settings'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: DESTINATION_TYPES, default: 'webhooks' },
    enabled,
    sources: names('sources'),
    settings: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(
        Object.entries(settingsProperties).map(([name, schema]) => [
          name,
          SETTINGS_FIELDS.secrets.includes(name) ? secret(schema) : allowEnvironment(schema),
        ]),
      ),
    },
  },
}

const computedTraitSchema = {
  type: 'object',
  required: ['kind', 'event'],
  additionalProperties: false,
  properties: { key: computationKey, enabled, ...definitionFields, destinations: names('destinations') },
}

const audienceSchema = {
  type: 'object',
  required: ['definition'],
  additionalProperties: false,
  properties: {
    key: computationKey,
    enabled,
    definition: audienceDefinition,
    includeAnonymous: { type: 'boolean', default: false },
    destinations: names('destinations'),
  },
}

const keyedByName = (schema: object, what: string) => ({
  type: 'object',
  propertyNames: { ...resourceName, pattern: '^\\S(.*\\S)?$' },
  additionalProperties: schema,
  description: `${what}, keyed by name.`,
})

/** The configuration document (docs/config-as-code.md). */
export const configDocumentSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'Sluice configuration',
  description:
    'Sources, destinations, computed traits and audiences, keyed by name. Apply with `sluice config apply FILE`.',
  type: 'object',
  required: ['version'],
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    version: { const: CONFIG_VERSION },
    prune: {
      type: 'boolean',
      default: false,
      description: 'Delete what the document does not list (sources with their stored calls).',
    },
    sources: keyedByName(sourceSchema, 'Sources'),
    destinations: keyedByName(destinationSchema, 'Destinations'),
    computedTraits: keyedByName(computedTraitSchema, 'Computed traits'),
    audiences: keyedByName(audienceSchema, 'Audiences'),
  },
}

const tags = ['Configuration']

const fieldChange = {
  type: 'object',
  required: ['field', 'from', 'to'],
  properties: {
    field: { type: 'string', description: 'JSON pointer inside the object, e.g. `/settings/webhooks`.' },
    from: { description: 'Now (secrets as placeholders; null when unset).' },
    to: { description: 'After applying.' },
  },
} as const

const changesAnswer = {
  type: 'object',
  required: ['changes'],
  properties: {
    changes: {
      type: 'array',
      description: 'In document order: sections, then names.',
      items: {
        type: 'object',
        required: ['action', 'section', 'name'],
        properties: {
          action: { type: 'string', enum: ['create', 'update', 'delete'] },
          section: { type: 'string', enum: ['sources', 'destinations', 'computedTraits', 'audiences'] },
          name: { type: 'string' },
          value: {
            type: 'object',
            additionalProperties: true,
            description: 'For `create`: the object as created (secrets as placeholders).',
          },
          fields: { type: 'array', items: fieldChange, description: 'For `update`: what differs.' },
        },
      },
    },
  },
} as const

const invalidDocument = {
  ...errorResponse,
  description: 'The document is invalid: every problem with its JSON pointer. Nothing was applied.',
  properties: {
    error: {
      ...errorResponse.properties.error,
      properties: {
        ...errorResponse.properties.error.properties,
        problems: {
          type: 'array',
          items: {
            type: 'object',
            required: ['field', 'message'],
            properties: { field: { type: 'string' }, message: { type: 'string' } },
          },
        },
      },
    },
  },
} as const

const conflict = {
  ...errorResponse,
  description:
    'A name is used more than once in a section, or the configuration changed during the apply (nothing was applied).',
} as const

const documentBody = {
  type: 'object',
  description: `A configuration document (schema: ${CONFIG_SCHEMA_PATH}); \`"prune": true\` deletes what it leaves out.`,
} as const

export const exportConfigSchema = {
  tags,
  summary: 'Export the configuration',
  description:
    'Every source, destination, computed trait and audience, keyed by name and sorted, as one document. Secrets and write keys are placeholders unless `secrets=include` (admin only).',
  security: ADMIN_SECURITY,
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: { secrets: { type: 'string', enum: ['include', 'placeholders'], default: 'placeholders' } },
  },
  response: {
    200: { type: 'object', additionalProperties: true, description: 'The configuration document.' },
    400: errorResponse,
    403: errorResponse,
    409: conflict,
    ...authErrors,
  },
} as const

export const planConfigSchema = {
  tags,
  summary: 'Plan a configuration',
  description: 'The changes the document would make. Nothing is changed.',
  security: ADMIN_SECURITY,
  body: documentBody,
  response: { 200: changesAnswer, 400: invalidDocument, 409: conflict, ...authErrors },
} as const

export const applyConfigSchema = {
  tags,
  summary: 'Apply a configuration',
  description: 'Makes the changes the plan shows, all in one transaction (all or nothing), and answers them.',
  security: ADMIN_SECURITY,
  body: documentBody,
  response: { 200: changesAnswer, 400: invalidDocument, 409: conflict, ...authErrors },
} as const
