/**
 * JSON Schemas of the destinations routes, and the types derived from them. The `settings` rules
 * shown here come from the Webhooks settings policy (`validateWebhooksSettings`), which checks them in
 * depth.
 */

import {
  DEFAULT_SIGNING,
  DESTINATION_TYPES,
  FILTER_ACTIONS,
  GRACE_PERIOD_SECONDS,
  SECRET_KINDS,
  WEBHOOK_METHODS,
} from '../domain/destinations.ts'
import {
  BATCHING_LIMITS,
  FILTER_LIMITS,
  HEALTH_LIMITS,
  RESERVED_HEADER_NAMES,
  WEBHOOKS_LIMITS,
} from '../domain/webhook-settings.ts'
import { MAX_MAPPING_BYTES } from '../lib/mapping-language.ts'
import { MAX_SUBSCRIPTION_LENGTH } from '../lib/subscription-language.ts'
import {
  ADMIN_SECURITY,
  authErrors,
  commonErrors,
  deleted,
  idParams,
  nullableTimestamp,
  type ResponseShape,
  resourceName,
  timestamp,
  withNotFound,
} from './common-schemas.ts'
import { deliveryStatsSchema } from './delivery-schemas.ts'

const destinationType = { type: 'string', enum: DESTINATION_TYPES } as const

const headers = {
  type: 'object',
  additionalProperties: { type: 'string' },
  maxProperties: WEBHOOKS_LIMITS.maxHeadersPerUrl,
  description:
    'Static headers sent with every request to this URL. Names must be legal HTTP tokens; values printable ASCII. ' +
    `Refused (any case): ${RESERVED_HEADER_NAMES.join(', ')}.`,
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
  // Marks a secret: never shown, and a placeholder in configuration exports (config-schemas.ts).
  writeOnly: true,
  description:
    'Write-only. When set, each request carries `X-Signature`: hex HMAC-SHA1 of the body with this key. ' +
    'Omit to keep the current secret; `null` removes it.',
} as const

const batchingLimit = (name: keyof typeof BATCHING_LIMITS, description: string) =>
  ({
    type: 'integer',
    description: `${description} ${BATCHING_LIMITS[name].min} to ${BATCHING_LIMITS[name].max}.`,
  }) as const

const batchingProperties = {
  maxEvents: batchingLimit('maxEvents', 'Most messages in one request:'),
  maxBytes: batchingLimit('maxBytes', 'Most bytes in one request body (a single larger message goes alone):'),
  maxWaitMs: batchingLimit('maxWaitMs', 'Longest the oldest message waits for its batch to fill, in ms:'),
} as const

const batching = {
  type: 'object',
  required: ['maxEvents', 'maxBytes', 'maxWaitMs'],
  properties: batchingProperties,
} as const

const batchingInput = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: batchingProperties,
  description:
    'Send several messages per request, as a JSON array, flushed when `maxEvents` or `maxBytes` is reached or the oldest ' +
    'waited `maxWaitMs`. A batch is signed, retried, dead-lettered and replayed as a unit. Omit to keep the current ' +
    'batching; `null` turns it off (one message per request).',
} as const

const subscription = {
  type: ['string', 'null'],
  maxLength: MAX_SUBSCRIPTION_LENGTH,
  description:
    "Which calls this destination gets, in Segment's subscription syntax, e.g. " +
    '`type = "track" and (event = "Order Completed" or event = "Product Added")`. Calls that do not match ' +
    'are not delivered (counted as `filtered`). Omit for every call; `null` removes it.',
} as const

const filters = {
  type: ['array', 'null'],
  maxItems: FILTER_LIMITS.maxFilters,
  description:
    'Rules applied in order after the subscription, each to the calls its `if` matches (every call without one). ' +
    '`null` removes them.',
  items: {
    type: 'object',
    required: ['action'],
    additionalProperties: false,
    properties: {
      if: { type: 'string', description: 'Which calls the rule applies to, in subscription syntax.' },
      action: {
        type: 'string',
        enum: FILTER_ACTIONS,
        description:
          '`drop`: not delivered (`filtered`). `sample`: keeps `percent`% of calls, decided by messageId ' +
          '(`sampledOut`). `dropFields`: removes `fields`. `allowFields`: keeps only `fields` (and type, messageId, timestamp).',
      },
      percent: { type: 'number', minimum: 0, maximum: 100, description: '`sample` only: the share kept.' },
      fields: {
        type: 'array',
        minItems: 1,
        maxItems: FILTER_LIMITS.maxFields,
        items: { type: 'string' },
        description: '`dropFields` / `allowFields` only: dot paths such as `properties.email`.',
      },
    },
  },
} as const

const mapping = {
  type: ['object', 'null'],
  additionalProperties: true,
  description:
    "The body, in Segment's mapping language (`@path`, `@template`, `@if`, `@literal`, `@arrayPath`, `@case`, " +
    `\`@replace\`, …) applied to the call. At most ${MAX_MAPPING_BYTES / 1024} KB of JSON. Omit for the documented ` +
    'shape; `null` removes it.',
} as const

const method = {
  type: ['string', 'null'],
  enum: [...WEBHOOK_METHODS, null],
  description: 'The HTTP method of each request. Default `POST`; `null` resets it.',
} as const

const autoDisable = {
  type: 'object',
  additionalProperties: false,
  required: ['afterHours'],
  properties: {
    afterHours: {
      type: 'integer',
      minimum: HEALTH_LIMITS.afterHours.min,
      maximum: HEALTH_LIMITS.afterHours.max,
      description: 'Hours of nothing but failed requests after which a URL is disabled.',
    },
  },
} as const

const maxRequestsPerSecond = {
  type: 'number',
  minimum: HEALTH_LIMITS.maxRequestsPerSecond.min,
  maximum: HEALTH_LIMITS.maxRequestsPerSecond.max,
  description:
    'Most requests per second to the URLs of this destination, per Sluice process. Default: no cap.',
} as const

const signingProperties = {
  xSignature: {
    type: 'boolean',
    description: `\`X-Signature\` (hex HMAC-SHA1 of the body) when a shared secret is set. Default ${DEFAULT_SIGNING.xSignature}.`,
  },
  standardWebhooks: {
    type: 'boolean',
    description:
      'The Standard Webhooks headers `webhook-id`, `webhook-timestamp` and `webhook-signature` (v1, HMAC-SHA256 with ' +
      `the \`whsec_\` secret, which Sluice makes when this is turned on and shows once). Default ${DEFAULT_SIGNING.standardWebhooks}.`,
  },
} as const

const signingInput = {
  type: ['object', 'null'],
  additionalProperties: false,
  properties: signingProperties,
  description:
    'Which signatures each request carries. Members left out keep their current values; `null` restores the defaults ' +
    `(${JSON.stringify(DEFAULT_SIGNING)}).`,
} as const

const standardWebhooksSecretInput = {
  type: ['string', 'null'],
  writeOnly: true,
  description:
    'Write-only. The Standard Webhooks secret: `whsec_` and standard base64 of 24 to 64 bytes. Sluice makes one when ' +
    '`signing.standardWebhooks` is turned on without it. Omit to keep it; `null` removes it (a new one is made if ' +
    'Standard Webhooks is on). To change it without downtime, rotate it (POST /destinations/{id}/secrets/rotate).',
} as const

/**
 * A destination's settings as they are written. Configuration as code exports and plans every member
 * listed here, and treats those marked `writeOnly` as secrets (config-schemas.ts).
 */
export const settingsProperties = {
  webhooks: webhooksInput,
  sharedSecret: sharedSecretInput,
  subscription,
  filters,
  mapping,
  method,
  batching: batchingInput,
  autoDisable: {
    ...autoDisable,
    type: ['object', 'null'],
    description:
      'Disables a URL whose every request failed this long (a `410 Gone` always does); `null` turns it off.',
  },
  maxRequestsPerSecond: { ...maxRequestsPerSecond, type: ['number', 'null'] },
  signing: signingInput,
  standardWebhooksSecret: standardWebhooksSecretInput,
} as const

/** The optional delivery settings as a destination view shows them (absent when unset). */
const deliveryPolicySettings = {
  subscription: { type: 'string' },
  filters: {
    type: 'array',
    items: {
      type: 'object',
      required: ['action'],
      properties: {
        if: { type: 'string' },
        action: { type: 'string', enum: FILTER_ACTIONS },
        percent: { type: 'number' },
        fields: { type: 'array', items: { type: 'string' } },
      },
    },
  },
  mapping: { type: 'object', additionalProperties: true },
  method: { type: 'string', enum: WEBHOOK_METHODS },
  autoDisable,
  maxRequestsPerSecond,
} as const

/** The optional delivery settings of a destination view. */
export type DeliveryPolicySettingsView = ResponseShape<{
  type: 'object'
  properties: typeof deliveryPolicySettings
}>

/** One URL's health, as `GET /destinations/{id}` shows it. */
export const endpointHealthSchema = {
  type: 'object',
  required: [
    'url',
    'state',
    'consecutiveFailures',
    'lastSuccessAt',
    'lastFailureAt',
    'lastError',
    'successRate1h',
    'disabledAt',
    'disabledReason',
  ],
  properties: {
    url: { type: 'string' },
    state: {
      type: 'string',
      enum: ['healthy', 'failing', 'disabled'],
      description:
        '`failing`: its latest request failed (even when another URL took the message); `disabled`: it gets no requests until enabled again.',
    },
    consecutiveFailures: { type: 'integer', description: 'Failed requests since its last success.' },
    lastSuccessAt: nullableTimestamp,
    lastFailureAt: nullableTimestamp,
    lastError: { type: ['string', 'null'], description: 'What went wrong with its latest failed request.' },
    successRate1h: {
      type: ['number', 'null'],
      description: 'Share of its requests in the last hour that got a 2xx (0 to 1); null when none was sent.',
    },
    disabledAt: nullableTimestamp,
    disabledReason: { type: ['string', 'null'] },
  },
} as const

/** One URL's health. */
export type EndpointHealthView = ResponseShape<typeof endpointHealthSchema>

const destination = {
  type: 'object',
  required: [
    'id',
    'name',
    'type',
    'enabled',
    'sourceIds',
    'settings',
    'createdAt',
    'updatedAt',
    'stats',
    'health',
  ],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    type: destinationType,
    enabled: { type: 'boolean', description: 'Only enabled destinations receive messages.' },
    sourceIds: {
      type: 'array',
      items: { type: 'string' },
      description: 'Sources whose messages this destination receives.',
    },
    settings: {
      type: 'object',
      required: ['webhooks', 'sharedSecretSet', 'signing', 'standardWebhooksSecretSet'],
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
        ...deliveryPolicySettings,
        batching: { ...batching, description: 'Present when messages are sent in batches.' },
        signing: {
          type: 'object',
          required: ['xSignature', 'standardWebhooks'],
          properties: signingProperties,
          description: 'Which signatures each request carries (the defaults when never set).',
        },
        standardWebhooksSecretSet: {
          type: 'boolean',
          description: 'Whether a Standard Webhooks secret is set; the secret itself is only shown once.',
        },
      },
    },
    createdAt: timestamp,
    updatedAt: timestamp,
    stats: { ...deliveryStatsSchema, description: 'Delivery counters, as at GET /destinations/{id}/stats.' },
    health: {
      type: 'array',
      items: endpointHealthSchema,
      description: "Each URL's health, in the order of `settings.webhooks`.",
    },
  },
} as const

/** A destination as the API shows it: settings without the shared secret, only whether one is set. */
export type DestinationView = ResponseShape<typeof destination>

const sourceIds = {
  type: 'array',
  uniqueItems: true,
  items: { type: 'string' },
  description: 'Ids of existing sources to receive messages from.',
} as const

const destinationTags = ['Destinations']

/** A destination as saved, with warnings about URLs Sluice will refuse to dial. */
const savedDestination = {
  ...destination,
  properties: {
    ...destination.properties,
    standardWebhooksSecret: {
      type: 'string',
      description:
        'The Standard Webhooks secret Sluice made for this destination: present only in the answer of the save that ' +
        'made it (turning `signing.standardWebhooks` on). Keep it now: it is never shown again.',
    },
    warnings: {
      type: 'array',
      description:
        'Problems that did not stop the save: URLs whose address Sluice refuses to deliver to (loopback, private, cloud metadata…). Empty when none.',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: { field: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
} as const

export const createDestinationSchema = {
  tags: destinationTags,
  summary: 'Create a destination',
  security: ADMIN_SECURITY,
  body: {
    type: 'object',
    required: ['name', 'type', 'settings'],
    additionalProperties: false,
    properties: {
      name: resourceName,
      type: {
        ...destinationType,
        description: `The kind of destination: ${DESTINATION_TYPES.map((type) => `\`${type}\``).join(', ')}.`,
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
  response: { 201: { ...savedDestination, description: 'The new destination.' }, ...commonErrors },
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
    ...authErrors,
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
      name: resourceName,
      enabled: { type: 'boolean' },
      sourceIds,
      settings: { type: 'object', additionalProperties: false, properties: settingsProperties },
    },
  },
  response: { 200: { ...savedDestination, description: 'The updated destination.' }, ...withNotFound },
} as const

export const deleteDestinationSchema = {
  tags: destinationTags,
  summary: 'Delete a destination',
  security: ADMIN_SECURITY,
  params: idParams,
  response: { 204: deleted, ...withNotFound },
} as const

export const enableUrlSchema = {
  tags: destinationTags,
  summary: "Enable a destination's URL again",
  description:
    'A disabled URL (it answered `410 Gone`, or failed for `settings.autoDisable.afterHours`) gets requests again at once, ' +
    'and deliveries that waited because every URL was disabled go out. `index` counts from 0 in `settings.webhooks`.',
  security: ADMIN_SECURITY,
  params: {
    type: 'object',
    required: ['id', 'index'],
    properties: { id: { type: 'string' }, index: { type: 'integer', minimum: 0 } },
  },
  response: { 200: { ...destination, description: 'The destination, with its health.' }, ...withNotFound },
} as const

const rotation = {
  type: 'object',
  required: ['kind', 'rotatedAt', 'graceEndsAt'],
  properties: {
    kind: { type: 'string', enum: SECRET_KINDS },
    rotatedAt: timestamp,
    graceEndsAt: {
      ...timestamp,
      description:
        'Until when the replaced secret signs beside the new one (the rotation time when there was none).',
    },
  },
} as const

/** One rotation as listed: its times, never a secret. */
export type SecretRotationView = ResponseShape<typeof rotation>

export const rotateSecretSchema = {
  tags: destinationTags,
  summary: "Rotate a destination's signing secret",
  description:
    'The new secret signs at once; the one it replaces keeps signing beside it for `gracePeriodSeconds` ' +
    '(`webhook-signature: v1,<new> v1,<old>`; `X-Signature` with the old shared secret, `X-Signature-Next` with the ' +
    'new). Answers the new secret, this once.',
  security: ADMIN_SECURITY,
  params: idParams,
  body: {
    type: 'object',
    required: ['kind'],
    additionalProperties: false,
    properties: {
      kind: {
        type: 'string',
        enum: SECRET_KINDS,
        description: '`standardWebhooks` (the `whsec_` secret) or `sharedSecret` (`X-Signature`).',
      },
      gracePeriodSeconds: {
        type: 'integer',
        minimum: GRACE_PERIOD_SECONDS.min,
        maximum: GRACE_PERIOD_SECONDS.max,
        default: GRACE_PERIOD_SECONDS.default,
        description: `How long the replaced secret keeps signing, in seconds (${GRACE_PERIOD_SECONDS.min} to ${GRACE_PERIOD_SECONDS.max}; default one day).`,
      },
      secret: {
        type: 'string',
        description:
          'The new secret, when you choose it: for `standardWebhooks` `whsec_` and base64 of 24 to 64 bytes. Left out, Sluice makes one.',
      },
    },
  },
  response: {
    200: {
      description: 'The new secret (shown this once) and the rotation.',
      type: 'object',
      required: ['secret', 'rotation'],
      properties: { secret: { type: 'string' }, rotation },
    },
    ...withNotFound,
  },
} as const

export const listRotationsSchema = {
  tags: destinationTags,
  summary: "List a destination's secret rotations",
  security: ADMIN_SECURITY,
  params: idParams,
  response: {
    200: {
      description: 'The rotations made, newest first: times only (at most the last 50).',
      type: 'object',
      required: ['rotations'],
      properties: { rotations: { type: 'array', items: rotation } },
    },
    ...withNotFound,
  },
} as const
