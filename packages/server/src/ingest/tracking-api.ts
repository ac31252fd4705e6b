import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { MESSAGE_TYPES, type MessageType } from '../domain/messages.ts'
import type { Source } from '../domain/sources.ts'
import { HttpError } from '../lib/errors.ts'
import { isJsonObject } from '../lib/json-object.ts'
import { decodeTrackingBody, tooLarge } from './body.ts'
import type { RequestContext } from './enrich.ts'
import { MAX_BATCH_ITEMS, MAX_WIRE_BYTES } from './limits.ts'
import type { LiveCalls } from './live-calls.ts'
import type { AcceptResult, IngestPipeline } from './pipeline.ts'
import { publicBaseUrl, rudderSourceConfig, segmentSettings } from './sdk-settings.ts'

export interface TrackingApiOptions {
  pipeline: IngestPipeline
  /** The source a write key belongs to, enabled or not: the browser SDK settings describe both. */
  findSource: (writeKey: string) => Promise<Source | null>
  /** `SLUICE_PUBLIC_URL`: where the settings documents send browsers (else the request's own host). */
  publicUrl: string | undefined
  /** Tells the live debugger about every judged call. Default: nobody is told. */
  liveCalls?: LiveCalls
}

/**
 * The paths analytics.js (Segment's browser SDK) posts single calls to: `{apiHost}/` and the first
 * letter of the type. Its batches go to `{apiHost}/b`.
 */
const SHORT_PATHS: Record<MessageType, string> = {
  identify: 'i',
  track: 't',
  page: 'p',
  screen: 's',
  group: 'g',
  alias: 'a',
}

/**
 * Request headers a preflight always allows: the ones analytics.js sends (`Authorization`,
 * `X-Retry-Count`), RudderStack's SDK sends (`AnonymousId`, `SentAt` and its `Rsa-*` retry headers),
 * and `Content-Encoding` for gzip. A preflight that asks for others gets them too: the write key, not
 * the headers or the origin, decides what a request may do.
 */
const PREFLIGHT_HEADERS = [
  'authorization',
  'content-type',
  'content-encoding',
  'x-retry-count',
  'anonymousid',
  'sentat',
  'rsa-recovered',
  'rsa-retry-attempt',
  'rsa-since-last-attempt',
  'rsa-since-first-attempt',
  'rsa-retry-reason',
]

/** Browsers may keep a settings document this long; a rotated or disabled write key shows within it. */
const SETTINGS_CACHE_CONTROL = 'public, max-age=300'
/**
 * The same, for a settings document whose URLs come from the request's own Host (and, behind a
 * trusted proxy, X-Forwarded-Host and -Proto) because SLUICE_PUBLIC_URL is unset. A shared cache keyed
 * on the URL alone would hand one client's Host to everyone (cache poisoning): only the browser may
 * keep it, and the headers it depends on are named for any cache that keeps it anyway.
 */
const REQUEST_DERIVED_CACHE_CONTROL = 'private, max-age=300'
const REQUEST_DERIVED_VARY = 'Host, X-Forwarded-Host, X-Forwarded-Proto'

/**
 * The Segment-compatible Tracking API over HTTP (docs/tracking-api.md): `/v1/batch`, `/v1/import` and
 * one route per call type, the short paths and settings documents browser SDKs use, and CORS. It reads
 * the body and the write key and answers; whether the key may send, and what happens to each call, is
 * the pipeline's business (pipeline.ts).
 */
export const trackingApi: FastifyPluginAsync<TrackingApiOptions> = async (
  app,
  { pipeline, findSource, publicUrl, liveCalls },
) => {
  const accept = async (source: Source, calls: unknown[], context: RequestContext, type?: MessageType) => {
    const result = await pipeline.accept(source, calls, context, type)
    liveCalls?.judged(source.id, calls, result, type)
    return result
  }
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
  const preflight = async (request: FastifyRequest, reply: FastifyReply) =>
    reply
      .code(204)
      .header('access-control-allow-methods', 'GET, HEAD, POST, OPTIONS')
      .header(
        'access-control-allow-headers',
        allowedHeaders(request.headers['access-control-request-headers']),
      )
      .header('access-control-max-age', '86400')
      .header('vary', 'Access-Control-Request-Headers')
      .send()
  for (const path of ['/v1/*', '/beacon/*', '/sourceConfig', '/sourceConfig/']) {
    app.options(path, { schema: { hide: true } }, preflight)
  }

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

  const acceptBatch = async (request: FastifyRequest, reply: FastifyReply, writeKeyInQuery: boolean) => {
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
    const source = await authenticate(request, pipeline, writeKeyInQuery)
    return sendResult(reply, await accept(source, body.batch, context))
  }
  const batchHandler = (request: FastifyRequest, reply: FastifyReply) => acceptBatch(request, reply, false)
  app.post('/v1/batch', { schema: { tags: ['tracking'], summary: 'Send a batch of calls' } }, batchHandler)
  app.post(
    '/v1/import',
    { schema: { tags: ['tracking'], summary: 'Import a batch of calls (same as /v1/batch)' } },
    batchHandler,
  )
  app.post(
    '/v1/b',
    { schema: { tags: ['tracking'], summary: "Send a batch of calls (analytics.js's path for /v1/batch)" } },
    batchHandler,
  )
  // RudderStack's SDK sends with navigator.sendBeacon here when told to (useBeacon): a beacon cannot
  // carry an Authorization header, so the write key comes in the query string.
  app.post(
    '/beacon/v1/batch',
    {
      schema: {
        tags: ['tracking'],
        summary: 'Send a batch of calls by beacon (RudderStack SDK), the write key in the query',
        querystring: {
          type: 'object',
          properties: { writeKey: { type: 'string', description: "The source's write key." } },
        },
      },
    },
    (request, reply) => acceptBatch(request, reply, true),
  )

  for (const type of MESSAGE_TYPES) {
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const body = requireObject(request.body)
      const receivedAt = Date.now()
      const context = { receivedAt, receivedAtIso: new Date(receivedAt).toISOString(), ip: request.ip }
      const source = await authenticate(request, pipeline, false)
      return sendResult(reply, await accept(source, [body], context, type))
    }
    app.post(`/v1/${type}`, { schema: { tags: ['tracking'], summary: `Send one ${type} call` } }, handler)
    app.post(
      `/v1/${SHORT_PATHS[type]}`,
      {
        schema: {
          tags: ['tracking'],
          summary: `Send one ${type} call (analytics.js's path for /v1/${type})`,
        },
      },
      handler,
    )
  }

  app.get(
    '/v1/projects/:writeKey/settings',
    {
      schema: {
        tags: ['tracking'],
        summary: 'The settings analytics.js loads from its CDN URL: send every call to this Sluice',
        params: {
          type: 'object',
          properties: { writeKey: { type: 'string', description: "The source's write key." } },
          required: ['writeKey'],
        },
      },
    },
    async (request, reply) => {
      const source = await sourceForSettings(findSource, (request.params as { writeKey: string }).writeKey)
      const base = publicBaseUrl(publicUrl, request.protocol, request.host)
      if (publicUrl === undefined) {
        reply.header('cache-control', REQUEST_DERIVED_CACHE_CONTROL).header('vary', REQUEST_DERIVED_VARY)
      } else reply.header('cache-control', SETTINGS_CACHE_CONTROL)
      return reply.send(segmentSettings(source, base))
    },
  )
  const sourceConfig = async (request: FastifyRequest, reply: FastifyReply) => {
    // The SDK sends the key both ways: as HTTP Basic and as `?writeKey=` in the URL.
    const writeKey = writeKeyFromHeader(request.headers.authorization) ?? writeKeyMember(request.query)
    const source = await sourceForSettings(findSource, writeKey)
    return reply.header('cache-control', SETTINGS_CACHE_CONTROL).send(rudderSourceConfig(source))
  }
  const sourceConfigSchema = {
    schema: {
      tags: ['tracking'],
      summary: "The source configuration RudderStack's JavaScript SDK loads from its configUrl",
      querystring: {
        type: 'object',
        properties: { writeKey: { type: 'string', description: "The source's write key (or HTTP Basic)." } },
      },
    },
  }
  app.get('/sourceConfig', sourceConfigSchema, sourceConfig)
  app.get('/sourceConfig/', { schema: { ...sourceConfigSchema.schema, hide: true } }, sourceConfig)
}

/**
 * The source a settings document describes. Unknown keys get a `404`, as from Segment's CDN; a
 * disabled source is described (RudderStack's SDK then stops; analytics.js's calls get `401`).
 */
async function sourceForSettings(
  findSource: TrackingApiOptions['findSource'],
  writeKey: string | undefined,
): Promise<Source> {
  const source = writeKey ? await findSource(writeKey) : null
  if (!source) {
    throw new HttpError(
      404,
      'unknown_write_key',
      writeKey
        ? 'No source has this write key: copy the write key of an existing source (sluice sources list, or the management API).'
        : 'No write key: put the source write key in the URL (or send it as the HTTP Basic user name).',
    )
  }
  return source
}

/** The preflight's allowed headers: the known ones, plus any other well-formed name the browser asks for. */
function allowedHeaders(requested: string | undefined): string {
  const names = new Set(PREFLIGHT_HEADERS)
  for (const name of (requested ?? '').split(',')) {
    const trimmed = name.trim().toLowerCase()
    if (/^[!#$%&'*+.^_`|~0-9a-z-]{1,64}$/.test(trimmed)) names.add(trimmed)
  }
  return [...names].join(', ')
}

/** The answer to nearly every request, serialized once. */
const SUCCESS = '{"success":true}'

/** `{"success": true}` when every call was accepted; else the counts and each rejection with its reason. */
function sendResult(reply: FastifyReply, { accepted, rejected }: AcceptResult): FastifyReply {
  return rejected.length === 0
    ? reply.type('application/json; charset=utf-8').send(SUCCESS)
    : reply.send({ success: true, accepted, rejected })
}

/**
 * The source whose write key the request carries: HTTP Basic (user name, empty password) or `writeKey`
 * in the body, or on the beacon route in the query string.
 */
function authenticate(
  request: FastifyRequest,
  pipeline: IngestPipeline,
  writeKeyInQuery: boolean,
): Promise<Source> {
  return pipeline.sourceFor(
    writeKeyFromHeader(request.headers.authorization) ??
      writeKeyMember(request.body) ??
      (writeKeyInQuery ? writeKeyMember(request.query) : undefined),
  )
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

/** `writeKey` of a parsed body or query string, when it is a non-empty string. */
function writeKeyMember(parsed: unknown): string | undefined {
  if (parsed === null || typeof parsed !== 'object') return undefined
  const writeKey = (parsed as Record<string, unknown>).writeKey
  return typeof writeKey === 'string' && writeKey ? writeKey : undefined
}

function requireObject(body: unknown): Record<string, unknown> {
  if (!isJsonObject(body)) throw new HttpError(400, 'invalid_body', 'The body must be a JSON object.')
  return body
}

function plainObject(value: unknown): Record<string, unknown> | undefined {
  return isJsonObject(value) ? value : undefined
}
