import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { HttpError } from '../lib/errors.ts'
import { routeTo } from '../route/router.ts'
import {
  type AcceptedMessage,
  MESSAGE_TYPES,
  type MessageType,
  type Source,
  type Store,
} from '../store/store.ts'
import { decodeTrackingBody, tooLarge } from './body.ts'
import { enrichMessage, type RequestContext } from './enrich.ts'
import { MAX_BATCH_ITEMS, MAX_MESSAGE_BYTES, MAX_WIRE_BYTES } from './limits.ts'
import type { IngestPipeline } from './pipeline.ts'
import { messageSizeError, validateMessage } from './validate.ts'

export interface TrackingApiOptions {
  store: Store
  pipeline: IngestPipeline
}

interface Rejection {
  index: number
  error: string
}

/** The Segment-compatible Tracking API (SPEC §2): `/v1/batch`, `/v1/import` and one route per call type. */
export const trackingApi: FastifyPluginAsync<TrackingApiOptions> = async (app, { store, pipeline }) => {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_WIRE_BYTES }, (request, raw, done) => {
    try {
      done(null, decodeTrackingBody(raw as Buffer, request.headers['content-encoding']))
    } catch (error) {
      done(error as Error, undefined)
    }
  })

  // Browser SDKs post from other origins; the write key, not the origin, authenticates them.
  // A callback hook, not an async one: it runs on every Tracking API request.
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('access-control-allow-origin', '*')
    done()
  })
  app.options('/v1/*', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .code(204)
      .header('access-control-allow-methods', 'POST, OPTIONS')
      .header('access-control-allow-headers', 'authorization, content-type, content-encoding')
      .header('access-control-max-age', '86400')
      .send(),
  )

  app.setErrorHandler((error, _request, reply) => {
    // Fastify refuses wire bodies over MAX_WIRE_BYTES before our parser sees them.
    if ((error as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE') throw tooLarge('')
    if ((error as { code?: string }).code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      throw new HttpError(
        400,
        'empty_body',
        'The request body is empty; send a JSON object describing the call.',
      )
    }
    reply.send(error)
  })

  const accept = async (
    request: FastifyRequest,
    items: unknown[],
    requestContext: RequestContext,
    forced?: MessageType,
  ) => {
    const source = await authenticate(request, store)
    const accepted: AcceptedMessage[] = []
    const rejected: Rejection[] = []
    for (let index = 0; index < items.length; index++) {
      const item = items[index]
      const candidate =
        forced && item !== null && typeof item === 'object' && !Array.isArray(item)
          ? { ...item, type: forced }
          : item
      const error = validateMessage(candidate)
      if (error) {
        rejected.push({ index, error })
        continue
      }
      const message = candidate as Record<string, unknown>
      const type = message.type as MessageType
      const payload = enrichMessage(message, type, requestContext)
      const payloadJson = JSON.stringify(payload)
      // Serialize once. The enriched message is never more than ~64 bytes smaller than the one sent
      // (only a long sentAt gets shorter; a writeKey is removed, so that case is measured), so the
      // exact 32 KB check on the original only runs for messages near the limit.
      if (payloadJson.length * 3 > MAX_MESSAGE_BYTES - 1024 || 'writeKey' in message) {
        const sizeError = messageSizeError(Buffer.byteLength(JSON.stringify(candidate)))
        if (sizeError) {
          rejected.push({ index, error: sizeError })
          continue
        }
      }
      accepted.push({
        sourceId: source.id,
        messageId: payload.messageId as string,
        type,
        receivedAt: requestContext.receivedAt,
        routeTo: routeTo(payload.integrations),
        payloadJson,
      })
    }
    // MUST await the commit: a 200 promises the messages are durable.
    if (accepted.length > 0) await pipeline.submit(accepted)
    if (rejected.length > 0) await store.countRejected(source.id, rejected.length)
    return rejected.length === 0 ? SUCCESS : { success: true, accepted: accepted.length, rejected }
  }

  const batchHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const body = requireObject(request.body)
    if (!Array.isArray(body.batch)) {
      throw new HttpError(
        400,
        'invalid_batch',
        'The body must have a "batch" array of messages, e.g. {"batch": [{"type": "track", ...}]}.',
      )
    }
    if (body.batch.length > MAX_BATCH_ITEMS) {
      throw new HttpError(
        400,
        'batch_too_large',
        `The batch has ${body.batch.length} messages; the limit is ${MAX_BATCH_ITEMS}. Split it into smaller batches.`,
      )
    }
    const receivedAt = Date.now()
    const context = {
      receivedAt,
      receivedAtIso: new Date(receivedAt).toISOString(),
      ip: request.ip,
      sentAt: body.sentAt,
      context: plainObject(body.context),
      integrations: plainObject(body.integrations),
    }
    return sendResult(reply, await accept(request, body.batch, context))
  }
  app.post('/v1/batch', { schema: { tags: ['tracking'], summary: 'Send a batch of calls' } }, batchHandler)
  app.post(
    '/v1/import',
    { schema: { tags: ['tracking'], summary: 'Import a batch of calls (same as /v1/batch)' } },
    batchHandler,
  )

  for (const type of MESSAGE_TYPES) {
    app.post(
      `/v1/${type}`,
      { schema: { tags: ['tracking'], summary: `Send one ${type} call` } },
      async (request, reply) => {
        const body = requireObject(request.body)
        const receivedAt = Date.now()
        const context = { receivedAt, receivedAtIso: new Date(receivedAt).toISOString(), ip: request.ip }
        return sendResult(reply, await accept(request, [body], context, type))
      },
    )
  }
}

/** The answer to nearly every request, serialized once. */
const SUCCESS = '{"success":true}'

function sendResult(reply: FastifyReply, result: typeof SUCCESS | object): FastifyReply {
  return typeof result === 'string'
    ? reply.type('application/json; charset=utf-8').send(result)
    : reply.send(result)
}

/** Write key from HTTP Basic (user name, empty password) or from `writeKey` in the body. */
async function authenticate(request: FastifyRequest, store: Store): Promise<Source> {
  const writeKey = writeKeyFromHeader(request.headers.authorization) ?? writeKeyFromBody(request.body)
  if (!writeKey) {
    throw new HttpError(
      401,
      'missing_write_key',
      'No write key: send the source write key as the HTTP Basic user name with an empty password, or as "writeKey" in the body.',
    )
  }
  const source = await store.getSourceByWriteKey(writeKey)
  if (!source) {
    throw new HttpError(
      401,
      'unknown_write_key',
      'Unknown write key: copy the write key of an existing source (sluice sources list, or the management API).',
    )
  }
  if (!source.enabled) {
    throw new HttpError(401, 'source_disabled', `Source ${source.id} is disabled; enable it to send events.`)
  }
  return source
}

function writeKeyFromHeader(header: string | undefined): string | undefined {
  if (!header) return undefined
  const [scheme, credentials] = header.split(' ', 2)
  if (scheme?.toLowerCase() !== 'basic' || !credentials) return undefined
  const decoded = Buffer.from(credentials, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  const user = colon === -1 ? decoded : decoded.slice(0, colon)
  return user || undefined
}

function writeKeyFromBody(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined
  const writeKey = (body as Record<string, unknown>).writeKey
  return typeof writeKey === 'string' && writeKey ? writeKey : undefined
}

function requireObject(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new HttpError(400, 'invalid_body', 'The body must be a JSON object.')
  }
  return body as Record<string, unknown>
}

function plainObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}
