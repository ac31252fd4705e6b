/**
 * JSON Schemas of the management API. The same objects validate requests, shape responses (Fastify
 * serializes through them, so a property missing here, such as `sharedSecret`, can never be sent) and
 * generate the OpenAPI document.
 */
import { WEBHOOKS_LIMITS } from '../deliver/webhook-settings.ts'

export const ADMIN_SECURITY = [{ adminToken: [] }]
export const NAME_MAX_LENGTH = 200

const name = {
  type: 'string',
  minLength: 1,
  maxLength: NAME_MAX_LENGTH,
  description: 'Shown in the UI and logs; surrounding whitespace is removed.',
} as const
const timestamp = { type: 'string', format: 'date-time' } as const

export const errorResponse = {
  description: 'What went wrong and how to fix it.',
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'Stable machine-readable code, e.g. `validation_failed`.' },
        message: { type: 'string', description: 'Says what was wrong and how to fix it.' },
        field: {
          type: 'string',
          description: 'JSON pointer to the offending input, e.g. `/settings/webhooks/0/url`.',
        },
      },
    },
  },
} as const

export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', description: 'The resource id, e.g. `src_…` or `dst_…`.' } },
} as const

/** Responses every management route can give besides its success. */
const commonErrors = { 400: errorResponse, 401: errorResponse } as const
const withNotFound = { ...commonErrors, 404: errorResponse } as const

// ---------------------------------------------------------------- sources

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
      required: ['accepted', 'duplicates', 'rejected'],
      properties: {
        accepted: { type: 'integer', description: 'Messages stored and routed.' },
        duplicates: { type: 'integer', description: 'Messages dropped as repeats of a recent messageId.' },
        rejected: { type: 'integer', description: 'Messages refused by per-message validation.' },
      },
    },
  },
} as const

export interface CreateSourceBody {
  name: string
  enabled?: boolean
}

export interface UpdateSourceBody {
  name?: string
  enabled?: boolean
  rotateWriteKey?: boolean
}

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
    properties: { name, enabled: { type: 'boolean', default: true } },
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
    401: errorResponse,
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
      name,
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
  response: { 204: { description: 'Deleted.', type: 'null' }, ...withNotFound },
} as const

// ---------------------------------------------------------------- destinations

const headers = {
  type: 'object',
  additionalProperties: { type: 'string' },
  maxProperties: WEBHOOKS_LIMITS.maxHeadersPerUrl,
  description:
    'Static headers sent with every request to this URL. Names must be legal HTTP tokens; values printable ASCII. ' +
    'Refused (any case): User-Agent, Content-Type, X-Signature, Host, Content-Length and hop-by-hop headers.',
} as const

const webhookUrl = {
  type: 'string',
  maxLength: WEBHOOKS_LIMITS.maxUrlLength,
  description: 'Absolute http:// or https:// URL without credentials.',
} as const

const webhooksInput = {
  type: 'array',
  minItems: WEBHOOKS_LIMITS.minUrls,
  maxItems: WEBHOOKS_LIMITS.maxUrls,
  items: {
    type: 'object',
    required: ['url'],
    additionalProperties: false,
    properties: { url: webhookUrl, headers },
  },
} as const

const sharedSecretInput = {
  type: ['string', 'null'],
  description:
    'Write-only. When set, each request carries `X-Signature`: hex HMAC-SHA1 of the body with this key. ' +
    'Omit to keep the current secret; `null` removes it.',
} as const

const settingsProperties = { webhooks: webhooksInput, sharedSecret: sharedSecretInput } as const

const destination = {
  type: 'object',
  required: ['id', 'name', 'type', 'enabled', 'sourceIds', 'settings', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string', enum: ['webhooks'] },
    enabled: { type: 'boolean', description: 'Only enabled destinations receive messages.' },
    sourceIds: {
      type: 'array',
      items: { type: 'string' },
      description: 'Sources whose messages this destination receives.',
    },
    settings: {
      type: 'object',
      required: ['webhooks', 'sharedSecretSet'],
      properties: {
        webhooks: {
          type: 'array',
          items: {
            type: 'object',
            required: ['url', 'headers'],
            properties: {
              url: { type: 'string' },
              headers: { type: 'object', additionalProperties: { type: 'string' } },
            },
          },
        },
        sharedSecretSet: {
          type: 'boolean',
          description: 'Whether a shared secret is set; the secret itself is never shown.',
        },
      },
    },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const

/** The `settings` member of a request, checked in depth by `validateWebhooksSettings`. */
export interface WebhooksSettingsBody {
  webhooks?: Array<{ url: string; headers?: Record<string, string> }>
  sharedSecret?: string | null
}

export interface CreateDestinationBody {
  name: string
  type: 'webhooks'
  enabled?: boolean
  sourceIds?: string[]
  settings: WebhooksSettingsBody
}

export interface UpdateDestinationBody {
  name?: string
  enabled?: boolean
  sourceIds?: string[]
  settings?: WebhooksSettingsBody
}

const sourceIds = {
  type: 'array',
  uniqueItems: true,
  items: { type: 'string' },
  description: 'Ids of existing sources to receive messages from.',
} as const

const destinationTags = ['Destinations']

export const createDestinationSchema = {
  tags: destinationTags,
  summary: 'Create a destination',
  security: ADMIN_SECURITY,
  body: {
    type: 'object',
    required: ['name', 'type', 'settings'],
    additionalProperties: false,
    properties: {
      name,
      type: {
        type: 'string',
        enum: ['webhooks'],
        description: 'The kind of destination; `webhooks` is the only one.',
      },
      enabled: { type: 'boolean', default: true },
      sourceIds: { ...sourceIds, default: [] },
      settings: {
        type: 'object',
        required: ['webhooks'],
        additionalProperties: false,
        properties: settingsProperties,
      },
    },
  },
  response: { 201: { ...destination, description: 'The new destination.' }, ...commonErrors },
} as const

export const listDestinationsSchema = {
  tags: destinationTags,
  summary: 'List destinations',
  security: ADMIN_SECURITY,
  response: {
    200: {
      description: 'Every destination, oldest first.',
      type: 'object',
      required: ['destinations'],
      properties: { destinations: { type: 'array', items: destination } },
    },
    401: errorResponse,
  },
} as const

export const getDestinationSchema = {
  tags: destinationTags,
  summary: 'Get a destination',
  security: ADMIN_SECURITY,
  params: idParams,
  response: { 200: { ...destination, description: 'The destination.' }, ...withNotFound },
} as const

export const updateDestinationSchema = {
  tags: destinationTags,
  summary: 'Update a destination',
  description:
    'Changes only the properties given. In `settings`, `webhooks` replaces the whole list when given; ' +
    '`sharedSecret` omitted keeps the current secret and `null` removes it.',
  security: ADMIN_SECURITY,
  params: idParams,
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      name,
      enabled: { type: 'boolean' },
      sourceIds,
      settings: { type: 'object', additionalProperties: false, properties: settingsProperties },
    },
  },
  response: { 200: { ...destination, description: 'The updated destination.' }, ...withNotFound },
} as const

export const deleteDestinationSchema = {
  tags: destinationTags,
  summary: 'Delete a destination',
  security: ADMIN_SECURITY,
  params: idParams,
  response: { 204: { description: 'Deleted.', type: 'null' }, ...withNotFound },
} as const
