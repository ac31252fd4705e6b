import { STATUS_CODES } from 'node:http'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify'
import { type Config, ConfigError } from '../config.ts'
import { DeliveryEngine } from '../deliver/engine.ts'
import { WebhookSender } from '../deliver/http-sender.ts'
import { ConflictError, NotFoundError, UnauthenticatedError, ValidationError } from '../domain/errors.ts'
import { GroupCommit } from '../ingest/group-commit.ts'
import { LiveCalls } from '../ingest/live-calls.ts'
import { IngestPipeline } from '../ingest/pipeline.ts'
import { trackingApi } from '../ingest/tracking-api.ts'
import { errorBody, HttpError } from '../lib/errors.ts'
import { createLogger, type Logger } from '../lib/logger.ts'
import { AccessControl } from '../manage/access-control.ts'
import { managementApi } from '../manage/management-api.ts'
import { registerOpenApi } from '../manage/openapi.ts'
import { isStoreUnavailable } from '../store/errors.ts'
import { openStore } from '../store/open.ts'
import type { Store } from '../store/store.ts'
import { resolveAdminToken } from './admin-token.ts'
import { keepYoungGenerationSmall } from './heap.ts'
import { Housekeeper } from './housekeeper.ts'
import { isAppNavigation, registerWebApp, sendAppShell } from './web-app.ts'

/** `SLUICE_TRUST_PROXY` as Fastify takes it: a hop count becomes "the nearest N proxies". */
function trustedProxies(
  setting: Config['trustProxy'],
): boolean | string | ((address: string, hop: number) => boolean) {
  return typeof setting === 'number' ? (_address, hop) => hop < setting : setting
}

export interface Sluice {
  app: FastifyInstance
  store: Store
  engine: DeliveryEngine
  config: Config
  logger: Logger
  /** The admin token in force, and whether it was generated just now (so the CLI prints it once). */
  adminToken: { value: string; generated: boolean }
  /** Starts listening; resolves with the base URL, e.g. `http://127.0.0.1:8080`. */
  listen(): Promise<string>
  /** Stops accepting, finishes in-flight requests and commits, then closes the store. */
  close(): Promise<void>
}

/** Builds a ready-to-listen Sluice: opens and migrates the store, registers every API. */
export async function createSluice(
  config: Config,
  logger: Logger = createLogger(config.logLevel),
): Promise<Sluice> {
  if (config.databaseUrl && !config.adminToken && config.role !== 'worker') {
    // Each process would otherwise generate its own token in its own data dir, and the management
    // API would answer to a different token depending on which process a request reached.
    throw new ConfigError(
      'SLUICE_ADMIN_TOKEN',
      'must be set when DATABASE_URL names a shared database, so every Sluice process accepts the same admin token',
    )
  }
  keepYoungGenerationSmall()
  const store = await openStore(config, logger)
  const adminToken = await resolveAdminToken(config)
  // Who may call the management API (and anything else protected by a token: see manage/auth.ts).
  const access = new AccessControl({ store, adminToken: adminToken.value })
  const sender = new WebhookSender({
    allowPrivate: config.allowPrivateDestinations,
    timeoutMs: config.retry.requestTimeoutMs,
    connectionsPerOrigin: config.deliveryConcurrency,
  })
  const engine = new DeliveryEngine({
    store,
    logger,
    sender,
    retry: config.retry,
    leaseMs: config.deliveryLeaseMs,
    concurrencyPerDestination: config.deliveryConcurrency,
  })
  const groupCommit = new GroupCommit(store, {
    // PostgreSQL commits in parallel on separate pooled connections; SQLite has a single writer.
    maxCommitsInFlight:
      store.kind === 'postgres' ? Math.min(4, Math.max(1, Math.floor(config.postgresPoolSize / 2))) : 1,
  })
  const housekeeper = new Housekeeper(store, logger, { retentionMs: config.retentionDays * 86_400_000 })

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // The Tracking API enforces its own 500 KB limit after decompression; this is the transport cap.
    bodyLimit: 1024 * 1024,
    forceCloseConnections: false,
    // Behind a trusted reverse proxy, request.ip (context.ip), .protocol and .host are the client's.
    trustProxy: trustedProxies(config.trustProxy),
    return503OnClosing: true,
    // Errors raised before routing answer in the same documented JSON shape as every other error.
    frameworkErrors: (error, _request, reply) => {
      const message =
        error.code === 'FST_ERR_BAD_URL'
          ? `The URL is not valid: ${error.message}. Percent-encode it as UTF-8.`
          : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
            ? 'A path parameter is longer than 100 characters; Sluice ids are much shorter.'
            : error.message
      void (reply as FastifyReply)
        .code(error.statusCode ?? 400)
        .send(errorBody(error.code.toLowerCase(), message))
    },
    clientErrorHandler: (error, socket) => {
      // Not even a parseable HTTP request: answer by hand and close.
      const tooLarge = (error as NodeJS.ErrnoException).code === 'HPE_HEADER_OVERFLOW'
      const status = tooLarge ? 431 : 400
      const body = JSON.stringify(
        tooLarge
          ? errorBody(
              'headers_too_large',
              'The request headers are larger than 16 KB; send fewer or shorter headers.',
            )
          : errorBody(
              'bad_http',
              'The request is not valid HTTP/1.1 (request line, Content-Length or chunked encoding).',
            ),
      )
      if (!socket.writable) return socket.destroy()
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      )
    },
  })

  app.setErrorHandler((error, request, reply) => {
    if (error instanceof HttpError) {
      return reply.code(error.statusCode).send(errorBody(error.code, error.message, error.field))
    }
    // The domain's refusals, whichever layer raised them.
    if (error instanceof ValidationError) {
      return reply.code(400).send(errorBody(error.code, error.message, error.field))
    }
    if (error instanceof UnauthenticatedError) {
      return reply.code(401).send(errorBody(error.code, error.message))
    }
    if (error instanceof NotFoundError) return reply.code(404).send(errorBody(error.code, error.message))
    if (error instanceof ConflictError) return reply.code(409).send(errorBody(error.code, error.message))
    const fastifyError = error as {
      statusCode?: number
      code?: string
      message: string
      validation?: unknown
    }
    const status = fastifyError.statusCode ?? 500
    if (fastifyError.validation) {
      return reply.code(400).send(errorBody('validation_failed', `Invalid request: ${fastifyError.message}.`))
    }
    if (isStoreUnavailable(error)) {
      request.log.warn({ err: error }, 'store unavailable: request refused with 503')
      return reply
        .code(503)
        .header('retry-after', '5')
        .send(
          errorBody(
            'store_unavailable',
            `Sluice cannot reach its store (${store.kind}) right now, so nothing in this request was stored. Retry it in a few seconds; if this persists, check that the database is up and see the Sluice log.`,
          ),
        )
    }
    if (status >= 500) {
      request.log.error({ err: error }, 'request failed')
      return reply
        .code(500)
        .send(errorBody('internal_error', 'Sluice failed to handle this request; see its log.'))
    }
    return reply
      .code(status)
      .send(errorBody(fastifyError.code?.toLowerCase() ?? 'bad_request', fastifyError.message))
  })
  const webApp = config.role !== 'worker'
  app.setNotFoundHandler((request, reply) =>
    webApp && reply.sendFile !== undefined && isAppNavigation(request)
      ? sendAppShell(reply)
      : reply
          .code(404)
          .send(
            errorBody(
              'not_found',
              `No route ${request.method} ${request.url}. See /api/openapi.json for the API.`,
            ),
          ),
  )

  await registerOpenApi(app)
  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }))
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const ok = await store.ping().catch(() => false)
    return reply.code(ok ? 200 : 503).send({ ok, store: store.kind, role: config.role })
  })
  if (config.role !== 'worker') {
    const liveCalls = new LiveCalls()
    await app.register(trackingApi, {
      liveCalls,
      pipeline: new IngestPipeline(store, groupCommit),
      findSource: (writeKey) => store.getSourceByWriteKey(writeKey),
      publicUrl: config.publicUrl,
    })
    await app.register(managementApi, {
      prefix: '/api/v1',
      store,
      access,
      testSender: engine,
      liveCalls,
      allowPrivateDestinations: config.allowPrivateDestinations,
    })
    await registerWebApp(app)
  }

  let closed = false
  return {
    app,
    store,
    engine,
    config,
    logger,
    adminToken,
    async listen() {
      const address = await app.listen({ port: config.port, host: config.host })
      if (config.role !== 'worker') housekeeper.start()
      if (config.role !== 'api') engine.start()
      return address
    },
    async close() {
      if (closed) return
      closed = true
      await housekeeper.stop() // a run in progress finishes before the store closes
      await app.close() // stops accepting; in-flight requests finish, including their commits
      await groupCommit.drain()
      await engine.stop() // in-flight deliveries finish (bounded by the request timeout) and are recorded
      await sender.close()
      await store.close()
    },
  }
}
