/**
 * JSON Schemas of the replay routes (stored calls sent again to a destination), and the types derived
 * from them.
 */
import { STORED_MESSAGE_TYPES } from '../domain/messages.ts'
import { REPLAY_STATUSES } from '../domain/replays.ts'
import { MAX_ID_LENGTH } from '../ingest/limits.ts'
import {
  ADMIN_SECURITY,
  nullableTimestamp,
  type ResponseShape,
  timestamp,
  withNotFound,
} from './common-schemas.ts'

const replayTags = ['Replays']

const replay = {
  type: 'object',
  required: [
    'id',
    'destinationId',
    'sourceIds',
    'from',
    'to',
    'types',
    'events',
    'force',
    'status',
    'scanned',
    'matched',
    'enqueued',
    'skipped',
    'delivered',
    'failed',
    'error',
    'createdAt',
    'finishedAt',
  ],
  properties: {
    id: {
      type: 'string',
      description: 'The replay id, `rpl_…`; every replayed request carries it in `X-Sluice-Replay`.',
    },
    destinationId: { type: 'string' },
    sourceIds: { type: 'array', items: { type: 'string' }, description: 'The sources whose calls it sends.' },
    from: { ...timestamp, description: 'Start of the window (calls received at or after it).' },
    to: { ...timestamp, description: 'End of the window (calls received before it).' },
    types: {
      type: ['array', 'null'],
      items: { type: 'string', enum: STORED_MESSAGE_TYPES },
      description: 'Only calls of these types; null for every type.',
    },
    events: {
      type: ['array', 'null'],
      items: { type: 'string' },
      description: 'Only track calls with these event names; null for every call.',
    },
    force: { type: 'boolean', description: 'Calls the destination already got are sent again too.' },
    status: {
      type: 'string',
      enum: REPLAY_STATUSES,
      description:
        'RUNNING until every call of the window was read and every delivery it created is final (FINISHED); CANCELLED; FAILED (see `error`).',
    },
    scanned: { type: 'integer', description: "Calls of the window's sources read so far." },
    matched: {
      type: 'integer',
      description:
        "Of those, the calls the replay's types and events, the call's integrations and the destination's subscription and filters let through.",
    },
    enqueued: { type: 'integer', description: 'Deliveries created.' },
    skipped: {
      type: 'integer',
      description:
        'Matched calls not sent because the destination already got them (or has them waiting); 0 with `force`.',
    },
    delivered: {
      type: 'integer',
      description: 'Its deliveries some URL answered with 2xx (a batch counts each message).',
    },
    failed: { type: 'integer', description: 'Its deliveries that failed for good.' },
    error: { type: ['string', 'null'], description: 'Why a FAILED replay stopped.' },
    createdAt: timestamp,
    finishedAt: { ...nullableTimestamp, description: 'When it finished, was cancelled or failed.' },
  },
} as const

export type ReplayView = ResponseShape<typeof replay>

const destinationIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', description: 'The destination id, `dst_…`.' } },
} as const

const replayParams = {
  type: 'object',
  required: ['id', 'replayId'],
  properties: {
    id: { type: 'string', description: 'The destination id, `dst_…`.' },
    replayId: { type: 'string', description: 'The replay id, `rpl_…`.' },
  },
} as const

export const startReplaySchema = {
  tags: replayTags,
  summary: 'Replay stored calls to a destination',
  description:
    'Sends the stored calls of the given sources (default: every source connected to the destination) received in ' +
    '[from, to) to the destination again, through its subscription, filters, mapping and batching as they are now. ' +
    'A call the destination already got (or has waiting) is skipped unless `force`. The replay runs in the ' +
    'background, yielding to live deliveries; follow it with GET. Each replayed request carries `X-Sluice-Replay`.',
  security: ADMIN_SECURITY,
  params: destinationIdParams,
  body: {
    type: 'object',
    additionalProperties: false,
    required: ['from', 'to'],
    properties: {
      sourceIds: {
        type: 'array',
        minItems: 1,
        maxItems: 100,
        items: { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH },
        description: 'Sources connected to the destination (default: all of them).',
      },
      from: {
        type: 'string',
        maxLength: 40,
        description:
          'ISO 8601 time with a zone, or a date (midnight UTC), inclusive, e.g. `2026-01-31T00:00:00Z`.',
      },
      to: { type: 'string', maxLength: 40, description: 'ISO 8601 time with a zone, or a date, exclusive.' },
      types: {
        type: 'array',
        maxItems: STORED_MESSAGE_TYPES.length,
        items: { type: 'string', enum: STORED_MESSAGE_TYPES },
        description: 'Only calls of these types (default: every type).',
      },
      events: {
        type: 'array',
        minItems: 1,
        maxItems: 100,
        items: { type: 'string', minLength: 1, maxLength: 200 },
        description: 'Only track calls with these event names (default: every call).',
      },
      force: { type: 'boolean', default: false, description: 'Send calls the destination already got too.' },
    },
  },
  response: { 201: { ...replay, description: 'The replay, started.' }, ...withNotFound },
} as const

export const listReplaysSchema = {
  tags: replayTags,
  summary: "A destination's replays",
  description: 'Newest first, with their progress.',
  params: destinationIdParams,
  response: {
    200: {
      type: 'object',
      required: ['replays'],
      properties: { replays: { type: 'array', items: replay } },
    },
    ...withNotFound,
  },
} as const

export const getReplaySchema = {
  tags: replayTags,
  summary: 'One replay, with its progress',
  params: replayParams,
  response: { 200: { ...replay, description: 'The replay.' }, ...withNotFound },
} as const

export const cancelReplaySchema = {
  tags: replayTags,
  summary: 'Cancel a replay',
  description:
    'Stops the replay: nothing more of it is sent once this answers (its requests in flight have ended, its waiting ' +
    'deliveries are deleted). A replay that already ended is answered as it is.',
  security: ADMIN_SECURITY,
  params: replayParams,
  response: { 200: { ...replay, description: 'The replay, CANCELLED (or as it ended).' }, ...withNotFound },
} as const
