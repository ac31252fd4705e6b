/** JSON Schemas of the alert and notice endpoints, and the view types derived from them. */
import { OPERATIONAL_EVENT_TYPES } from '../domain/health-store.ts'
import {
  ADMIN_SECURITY,
  commonErrors,
  deleted,
  errorResponse,
  type ResponseShape,
  timestamp,
} from './common-schemas.ts'

const alertTags = ['Alerts']
const forbidden = { 403: errorResponse } as const

const eventType = { type: 'string', enum: OPERATIONAL_EVENT_TYPES } as const

const alertSettings = {
  type: 'object',
  required: ['url', 'sharedSecret', 'events', 'updatedAt'],
  properties: {
    url: { type: 'string' },
    sharedSecret: {
      type: 'string',
      description:
        'The `whsec_` secret that signs every alert; shown in full only when Sluice has just generated it.',
    },
    events: {
      type: ['array', 'null'],
      items: eventType,
      description: 'The event types sent; null: every type.',
    },
    updatedAt: timestamp,
  },
} as const

/** Where alerts go, as the API shows it. */
export type AlertSettingsView = ResponseShape<typeof alertSettings>

export const getAlertsSchema = {
  tags: alertTags,
  summary: 'Get the alert URL',
  description: 'Where Sluice POSTs its operational events; the secret is masked. `404` when none is set.',
  security: ADMIN_SECURITY,
  response: { 200: alertSettings, ...commonErrors, ...forbidden, 404: errorResponse },
} as const

export const putAlertsSchema = {
  tags: alertTags,
  summary: 'Set the alert URL',
  description:
    'Sluice POSTs operational events (`destination.url.failing`, `destination.url.disabled`, `destination.url.recovered`, ' +
    '`delivery.dead_lettered`, `regulation.finished`) to this URL, signed with Standard Webhooks headers, with retries. ' +
    'Without `sharedSecret` the current one is kept, or a new one is generated and shown once in the answer.',
  security: ADMIN_SECURITY,
  body: {
    type: 'object',
    required: ['url'],
    additionalProperties: false,
    properties: {
      url: { type: 'string', description: 'An absolute http:// or https:// URL.' },
      sharedSecret: {
        type: ['string', 'null'],
        description:
          '`whsec_` and standard base64 of 24 to 64 bytes, as for a destination; `null` generates a new one.',
      },
      events: { type: ['array', 'null'], items: { type: 'string' }, description: 'Default: every type.' },
    },
  },
  response: { 200: alertSettings, ...commonErrors, ...forbidden },
} as const

export const deleteAlertsSchema = {
  tags: alertTags,
  summary: 'Stop sending alerts',
  security: ADMIN_SECURITY,
  response: { 204: deleted, ...commonErrors, ...forbidden },
} as const

const notice = {
  type: 'object',
  required: ['id', 'type', 'createdAt', 'data', 'alertStatus', 'alertAttempts', 'alertError'],
  properties: {
    id: { type: 'string', description: 'The alert’s `webhook-id`.' },
    type: eventType,
    createdAt: timestamp,
    data: {
      type: 'object',
      additionalProperties: true,
      description: "What happened; which members depend on the event's type.",
      properties: {
        destinationId: { type: 'string' },
        destinationName: { type: 'string' },
        url: { type: 'string' },
        reason: { type: 'string', description: 'Why a URL was disabled.' },
        consecutiveFailures: { type: 'integer' },
        lastError: { type: 'string' },
        count: { type: 'integer', description: 'Deliveries dead-lettered since the last such event.' },
        regulationId: { type: 'string' },
        status: { type: 'string', description: "A finished regulation's status." },
      },
    },
    alertStatus: {
      type: 'string',
      enum: ['none', 'pending', 'delivered', 'failed'],
      description: '`none`: no alert URL wanted it.',
    },
    alertAttempts: { type: 'integer' },
    alertError: { type: ['string', 'null'] },
  },
} as const

/** One operational event, as a notice. */
export type NoticeView = ResponseShape<typeof notice>

export const listNoticesSchema = {
  tags: alertTags,
  summary: 'List recent notices',
  description:
    'Operational events (failing, disabled and recovered URLs, dead letters, finished regulations), newest first.',
  security: ADMIN_SECURITY,
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: { limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 } },
  },
  response: {
    200: { type: 'object', required: ['notices'], properties: { notices: { type: 'array', items: notice } } },
    ...commonErrors,
  },
} as const
