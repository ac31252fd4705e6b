/**
 * JSON Schemas of the management API. The same objects validate requests, shape responses (Fastify
 * serializes through them, so a property missing here, such as `sharedSecret`, can never be sent) and
 * generate the OpenAPI document.
 */
import { WEBHOOKS_LIMITS } from '../deliver/webhook-settings.ts'
import { DELIVERY_STATUSES, MESSAGE_TYPES } from '../store/store.ts'

export const ADMIN_SECURITY = [{ adminToken: [] }]
export const NAME_MAX_LENGTH = 200

const name = {
  type: 'string',
  minLength: 1,
  maxLength: NAME_MAX_LENGTH,
  description: 'Shown in the UI and logs; surrounding whitespace is removed.',
} as const
const timestamp = { type: 'string', format: 'date-time' } as const
const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' } as const

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

/** Delivery counters of one destination; declared here because every destination view carries them. */
const deliveryStats = {
  type: 'object',
  required: ['pending', 'retrying', 'delivered', 'failed', 'deadLettered', 'latencyP50Ms', 'latencyP95Ms'],
  properties: {
    pending: { type: 'integer', description: 'Deliveries not attempted yet.' },
    retrying: {
      type: 'integer',
      description: 'Deliveries that failed in a retryable way and wait for their next attempt.',
    },
    delivered: { type: 'integer', description: 'Deliveries some URL answered with 2xx.' },
    failed: {
      type: 'integer',
      description: 'Deliveries that failed for good, dead-lettered ones included. They can be replayed.',
    },
    deadLettered: {
      type: 'integer',
      description: 'Failed deliveries whose retry window (4 hours from the first attempt) ran out.',
    },
    latencyP50Ms: {
      type: ['number', 'null'],
      description:
        "Median request latency over the destination's last 1,000 attempts; null before the first.",
    },
    latencyP95Ms: {
      type: ['number', 'null'],
      description: '95th percentile request latency over the last 1,000 attempts; null before the first.',
    },
  },
} as const

const destination = {
  type: 'object',
  required: ['id', 'name', 'type', 'enabled', 'sourceIds', 'settings', 'createdAt', 'updatedAt', 'stats'],
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
    stats: { ...deliveryStats, description: 'Delivery counters, as at GET /destinations/{id}/stats.' },
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

// ---------------------------------------------------------------- deliveries

export const LIST_DELIVERIES_MAX_LIMIT = 500
export const LIST_DELIVERIES_DEFAULT_LIMIT = 50

const deliveryTags = ['Deliveries']

const deliveryStatus = {
  type: 'string',
  enum: DELIVERY_STATUSES,
  description:
    '`pending`: not attempted yet. `retrying`: failed in a retryable way, next attempt at `nextAttemptAt`. ' +
    '`delivered`: a URL answered 2xx. `failed`: failed for good (see `deadLettered`).',
} as const

/** What a request to one URL brought; shared by recorded attempts and test sends. */
const attemptResultProperties = {
  url: { type: 'string' },
  statusCode: {
    type: ['integer', 'null'],
    description: "The endpoint's HTTP status; null when it never answered.",
  },
  errorKind: {
    type: ['string', 'null'],
    description:
      'Why there was no 2xx: `http`, `redirect`, `timeout`, `connect`, `dns`, `protocol`, `tls`, `ssrf`, ' +
      '`invalid_url`, `invalid_request`, `invalid_message` or `unknown`; null on success.',
  },
  errorText: { type: ['string', 'null'], description: 'What went wrong, in words; null on success.' },
  latencyMs: {
    type: 'integer',
    description: 'From the start of the request to the response headers (or the failure).',
  },
  responseExcerpt: {
    type: ['string', 'null'],
    description: 'At most the first 1 KB of the response body; null when it was empty.',
  },
} as const

const attempt = {
  type: 'object',
  required: ['attemptedAt', 'url', 'statusCode', 'errorKind', 'errorText', 'latencyMs', 'responseExcerpt'],
  properties: { attemptedAt: timestamp, ...attemptResultProperties },
} as const

const delivery = {
  type: 'object',
  required: [
    'id',
    'destinationId',
    'sourceId',
    'messageId',
    'type',
    'status',
    'deadLettered',
    'attemptCount',
    'nextAttemptAt',
    'firstAttemptAt',
    'createdAt',
    'updatedAt',
    'attempts',
  ],
  properties: {
    id: {
      type: 'integer',
      description: 'The delivery id, for GET /deliveries/{id} and the `before` cursor.',
    },
    destinationId: { type: 'string' },
    sourceId: { type: 'string' },
    messageId: { type: 'string', description: "The message's `messageId`, as the receiver gets it." },
    type: { type: 'string', enum: MESSAGE_TYPES },
    status: deliveryStatus,
    deadLettered: {
      type: 'boolean',
      description: 'True when it failed because retries ran out of their window; replay it to try again.',
    },
    attemptCount: { type: 'integer', description: 'Attempts made; each attempt may POST to several URLs.' },
    nextAttemptAt: { ...nullableTimestamp, description: 'When the next attempt is due; null once final.' },
    firstAttemptAt: { ...nullableTimestamp, description: 'When the first attempt was made; null before it.' },
    createdAt: timestamp,
    updatedAt: timestamp,
    attempts: {
      type: 'array',
      items: attempt,
      description: 'One entry per request to one URL, oldest first.',
    },
  },
} as const

const destinationIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', description: 'The destination id, `dst_…`.' } },
} as const

const deliveryIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', description: 'The delivery id, a whole number such as `42`.' } },
} as const

export interface ListDeliveriesQuery {
  status?: (typeof DELIVERY_STATUSES)[number]
  limit: number
  before?: number
}

export const listDeliveriesSchema = {
  tags: deliveryTags,
  summary: "List a destination's deliveries",
  description:
    'Newest first, each with its attempts. Page with `before`: pass the `nextCursor` of the previous page.',
  security: ADMIN_SECURITY,
  params: destinationIdParams,
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      status: { ...deliveryStatus, description: 'Only deliveries in this state.' },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: LIST_DELIVERIES_MAX_LIMIT,
        default: LIST_DELIVERIES_DEFAULT_LIMIT,
        description: `How many deliveries per page, 1 to ${LIST_DELIVERIES_MAX_LIMIT}.`,
      },
      before: {
        type: 'integer',
        minimum: 1,
        description: "Only deliveries older than this id: the previous page's `nextCursor`.",
      },
    },
  },
  response: {
    200: {
      description: 'A page of deliveries.',
      type: 'object',
      required: ['deliveries', 'nextCursor'],
      properties: {
        deliveries: { type: 'array', items: delivery },
        nextCursor: {
          type: ['integer', 'null'],
          description: 'Pass as `before` for the next page; null on the last page.',
        },
      },
    },
    ...withNotFound,
  },
} as const

export const getDeliverySchema = {
  tags: deliveryTags,
  summary: 'Get a delivery and its attempts',
  security: ADMIN_SECURITY,
  params: deliveryIdParams,
  response: { 200: { ...delivery, description: 'The delivery.' }, ...withNotFound },
} as const

export const replayDeliverySchema = {
  tags: deliveryTags,
  summary: 'Replay a delivery',
  description:
    'Sends a failed (or dead-lettered, or delivered) delivery again at once, with a fresh retry window. ' +
    'A delivery that is still pending or retrying is already scheduled: 409. A disabled destination ' +
    'keeps the replayed delivery pending until it is enabled.',
  security: ADMIN_SECURITY,
  params: deliveryIdParams,
  response: {
    202: { ...delivery, description: 'The delivery, scheduled to go out again.' },
    ...withNotFound,
    409: errorResponse,
  },
} as const

export interface ReplayDestinationQuery {
  status: 'failed' | 'delivered'
  since?: string
}

export const replayDestinationSchema = {
  tags: deliveryTags,
  summary: "Replay a destination's failed (or delivered) deliveries",
  description:
    'Schedules every final delivery of the destination with the given status to go out again at once, ' +
    'with a fresh retry window. Deliveries that are pending or retrying are left alone.',
  security: ADMIN_SECURITY,
  params: destinationIdParams,
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      status: {
        type: 'string',
        enum: ['failed', 'delivered'],
        default: 'failed',
        description: 'Which final deliveries to replay; `failed` includes dead-lettered ones.',
      },
      since: {
        type: 'string',
        description:
          'ISO 8601 time, e.g. `2026-01-31T12:00:00Z`: only deliveries created at or after it (when the message was accepted).',
      },
    },
  },
  response: {
    202: {
      description: 'How many deliveries were scheduled again.',
      type: 'object',
      required: ['replayed'],
      properties: { replayed: { type: 'integer' } },
    },
    ...withNotFound,
  },
} as const

export const testDestinationSchema = {
  tags: deliveryTags,
  summary: 'Send a test event to a destination',
  description:
    'POSTs a sample track call (userId `sluice-test`, event `Sluice Test Event`) to every URL of the ' +
    'destination, signed like a real delivery, and reports what each URL answered. Works while the ' +
    'destination is disabled; nothing is recorded and nothing is retried.',
  security: ADMIN_SECURITY,
  params: destinationIdParams,
  response: {
    200: {
      description: 'What each URL answered.',
      type: 'object',
      required: ['ok', 'messageId', 'results'],
      properties: {
        ok: { type: 'boolean', description: 'True when some URL answered 2xx.' },
        messageId: {
          type: 'string',
          description: 'The `messageId` of the test event, to find it at the receiver.',
        },
        results: {
          type: 'array',
          items: {
            type: 'object',
            required: ['url', 'statusCode', 'errorKind', 'errorText', 'latencyMs', 'responseExcerpt'],
            properties: attemptResultProperties,
          },
        },
      },
    },
    ...withNotFound,
  },
} as const

export const destinationStatsSchema = {
  tags: deliveryTags,
  summary: "A destination's delivery counters",
  security: ADMIN_SECURITY,
  params: destinationIdParams,
  response: {
    200: { ...deliveryStats, description: 'Counts per state and request latency.' },
    ...withNotFound,
  },
} as const
