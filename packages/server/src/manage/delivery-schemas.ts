/**
 * JSON Schemas of the deliveries routes (records, replays, test sends, counters), and the types
 * derived from them.
 */
import { ERROR_KINDS } from '../deliver/error-kinds.ts'
import { RESPONSE_EXCERPT_BYTES } from '../deliver/http-sender.ts'
import { DEFAULT_RETRY_SETTINGS } from '../deliver/retry-policy.ts'
import { TEST_EVENT } from '../deliver/test-event.ts'
import {
  DELIVERY_PAGE_SIZE,
  DELIVERY_STATUSES,
  LATENCY_SAMPLE,
  REPLAYABLE_STATUSES,
} from '../domain/deliveries.ts'
import { STORED_MESSAGE_TYPES } from '../domain/messages.ts'
import { MAX_ID_LENGTH } from '../ingest/limits.ts'
import { thousands } from '../lib/thousands.ts'
import {
  ADMIN_SECURITY,
  errorResponse,
  MAX_CURSOR,
  nullableTimestamp,
  type ResponseShape,
  timestamp,
  wholeNumberQuery,
  withNotFound,
} from './common-schemas.ts'
import { seriesQuerystring, seriesResponse } from './series-query.ts'

const deliveryTags = ['Deliveries']

const RETRY_WINDOW_HOURS = DEFAULT_RETRY_SETTINGS.windowMs / 3_600_000

/** Delivery counters of one destination; every destination view carries them too. */
export const deliveryStatsSchema = {
  type: 'object',
  required: [
    'pending',
    'retrying',
    'delivered',
    'failed',
    'deadLettered',
    'latencyP50Ms',
    'latencyP95Ms',
    'filtered',
    'sampledOut',
  ],
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
      description:
        'Failed deliveries whose retry window ran out (SLUICE_RETRY_WINDOW_SECONDS from the first attempt, ' +
        `${RETRY_WINDOW_HOURS} hours by default).`,
    },
    latencyP50Ms: {
      type: ['number', 'null'],
      description: `Median request latency over the destination's last ${thousands(LATENCY_SAMPLE)} attempts; null before the first.`,
    },
    latencyP95Ms: {
      type: ['number', 'null'],
      description: `95th percentile request latency over the last ${thousands(LATENCY_SAMPLE)} attempts; null before the first.`,
    },
    filtered: {
      type: 'integer',
      description:
        'Calls the subscription or a `drop` filter kept from this destination; no delivery was created.',
    },
    sampledOut: {
      type: 'integer',
      description: 'Calls a `sample` filter left out; no delivery was created.',
    },
  },
} as const

/** A destination's counters as the API shows them. */
export type DeliveryStatsView = ResponseShape<typeof deliveryStatsSchema>

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
    description: `Why there was no 2xx: ${ERROR_KINDS.slice(0, -1)
      .map((kind) => `\`${kind}\``)
      .join(', ')} or \`${ERROR_KINDS.at(-1)}\`; null on success.`,
  },
  errorText: { type: ['string', 'null'], description: 'What went wrong, in words; null on success.' },
  latencyMs: {
    type: 'integer',
    description: 'From the start of the request to the response headers (or the failure).',
  },
  responseExcerpt: {
    type: ['string', 'null'],
    description: `At most the first ${RESPONSE_EXCERPT_BYTES} bytes of the response body; null when it was empty.`,
  },
} as const

const attemptResult = {
  type: 'object',
  required: ['url', 'statusCode', 'errorKind', 'errorText', 'latencyMs', 'responseExcerpt'],
  properties: attemptResultProperties,
} as const

/** What one request to one URL brought, as the API shows it (a test send, or part of an attempt). */
export type AttemptResultView = ResponseShape<typeof attemptResult>

const attempt = {
  type: 'object',
  required: ['attemptedAt', 'url', 'statusCode', 'errorKind', 'errorText', 'latencyMs', 'responseExcerpt'],
  properties: { attemptedAt: timestamp, ...attemptResultProperties },
} as const

/** One recorded request of a delivery, as the API shows it. */
export type AttemptView = ResponseShape<typeof attempt>

const delivery = {
  type: 'object',
  required: [
    'id',
    'destinationId',
    'sourceId',
    'messageId',
    'type',
    'userId',
    'anonymousId',
    'event',
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
    type: { type: 'string', enum: STORED_MESSAGE_TYPES },
    userId: { type: ['string', 'null'], description: "The message's `userId`; null when it has none." },
    anonymousId: {
      type: ['string', 'null'],
      description: "The message's `anonymousId`; null when it has none.",
    },
    event: {
      type: ['string', 'null'],
      description: "A track call's `event`, or a page or screen call's `name`; null for other calls.",
    },
    status: deliveryStatus,
    deadLettered: {
      type: 'boolean',
      description: 'True when it failed because retries ran out of their window; replay it to try again.',
    },
    attemptCount: { type: 'integer', description: 'Attempts made; each attempt may POST to several URLs.' },
    batchId: {
      type: 'integer',
      description:
        "The batch this message is sent in, when its destination batches: status, attempts and replays are the batch's. " +
        'Absent when it is sent alone, or not yet put in a batch.',
    },
    replayId: {
      type: 'string',
      description:
        "The replay that created this delivery (`rpl_…`, also in its requests' `X-Sluice-Replay`). Absent for live deliveries.",
    },
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

/** A delivery with its attempts, as the API shows it. */
export type DeliveryView = ResponseShape<typeof delivery>

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

export const listDeliveriesSchema = {
  tags: deliveryTags,
  summary: "List a destination's deliveries",
  description:
    'Newest first, each with its attempts, filtered by status, message type, userId and creation time. Page with `before`: pass the `nextCursor` of the previous page.',
  security: ADMIN_SECURITY,
  params: destinationIdParams,
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      status: { ...deliveryStatus, description: 'Only deliveries in this state.' },
      limit: wholeNumberQuery({
        minimum: 1,
        maximum: DELIVERY_PAGE_SIZE.max,
        default: DELIVERY_PAGE_SIZE.default,
        description: `How many deliveries per page, 1 to ${DELIVERY_PAGE_SIZE.max}.`,
      }),
      before: wholeNumberQuery({
        minimum: 1,
        maximum: MAX_CURSOR,
        description: "Only deliveries older than this id: the previous page's `nextCursor`.",
      }),
      type: {
        type: 'string',
        enum: STORED_MESSAGE_TYPES,
        description: 'Only deliveries of messages of this type.',
      },
      userId: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_ID_LENGTH,
        description: 'Only deliveries of messages with this `userId`.',
      },
      since: {
        type: 'string',
        description: 'Only deliveries created at or after this ISO 8601 time, e.g. `2026-01-31T12:00:00Z`.',
      },
      until: { type: 'string', description: 'Only deliveries created before this ISO 8601 time.' },
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

const headerMap = { type: 'object', additionalProperties: { type: 'string' } } as const

export const deliveryRequestSchema = {
  tags: deliveryTags,
  summary: 'What a delivery sends',
  description:
    "The exact body (the same bytes on every attempt and to every URL) and each URL's headers, rebuilt from the stored message and the destination's current settings. Viewers see static header values masked.",
  security: ADMIN_SECURITY,
  params: deliveryIdParams,
  response: {
    200: {
      description: 'The request as sent.',
      type: 'object',
      required: ['method', 'body', 'requests'],
      properties: {
        method: {
          type: 'string',
          enum: ['POST', 'PUT', 'PATCH'],
          description: 'The HTTP method (settings.method).',
        },
        body: { type: 'string', description: 'The JSON body, as sent and signed.' },
        requests: {
          type: 'array',
          items: {
            type: 'object',
            required: ['url', 'headers'],
            properties: {
              url: { type: 'string' },
              headers: { ...headerMap, description: 'Static headers first, then the ones Sluice adds.' },
            },
          },
        },
      },
    },
    ...withNotFound,
  },
} as const

export const destinationSeriesSchema = {
  tags: deliveryTags,
  summary: "A destination's delivery figures over time",
  description:
    'Per step: attempts that got a 2xx answer (`succeeded`) and those that did not (`failed`), and the p50 and p95 request latency, estimated from a latency histogram kept per minute. Answered from per-minute rollups, so a week comes back in milliseconds.',
  security: ADMIN_SECURITY,
  params: destinationIdParams,
  querystring: seriesQuerystring,
  response: {
    200: seriesResponse({
      required: ['at', 'succeeded', 'failed', 'latencyP50Ms', 'latencyP95Ms'],
      properties: {
        at: timestamp,
        succeeded: { type: 'integer' },
        failed: { type: 'integer' },
        latencyP50Ms: { type: ['integer', 'null'] },
        latencyP95Ms: { type: ['integer', 'null'] },
      },
    }),
    ...withNotFound,
  },
} as const

/** The answer of GET /deliveries/{id}/request. */
export type DeliveryRequestView = ResponseShape<(typeof deliveryRequestSchema)['response'][200]>

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

export const replayDestinationSchema = {
  tags: deliveryTags,
  summary: "Replay a destination's failed (or delivered) deliveries",
  description:
    'Schedules every final delivery of the destination with the given status to go out again at once, ' +
    'with a fresh retry window. Deliveries that are pending or retrying are left alone. Each call goes ' +
    'out at most once: a delivery is skipped when another delivery of the same call to this destination ' +
    'is pending or retrying, or (replaying `failed`) delivered; of several with the status, the newest ' +
    'goes. A batch goes out whole, with its members, so a batch holding a call that would be skipped is ' +
    'left out (replay one of its deliveries by id to send it).',
  security: ADMIN_SECURITY,
  params: destinationIdParams,
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      status: {
        type: 'string',
        enum: REPLAYABLE_STATUSES,
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
    `POSTs a sample track call (userId \`${TEST_EVENT.userId}\`, event \`${TEST_EVENT.event}\`) to every URL of the ` +
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
        results: { type: 'array', items: attemptResult },
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
    200: { ...deliveryStatsSchema, description: 'Counts per state and request latency.' },
    ...withNotFound,
  },
} as const
