import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify'
import { type Config, ConfigError } from '../config.ts'
import { AlertSender } from '../deliver/alert-sender.ts'
import { DeliveryEngine } from '../deliver/engine.ts'
import { WebhookSender } from '../deliver/http-sender.ts'
import { ReplayRunner } from '../deliver/replay-runner.ts'
import { InvalidDocumentError } from '../domain/config-document.ts'
import { readEndpointHealth } from '../domain/endpoint-health.ts'
import { ConflictError, NotFoundError, UnauthenticatedError, ValidationError } from '../domain/errors.ts'
import { GroupCommit } from '../ingest/group-commit.ts'
import { LiveCalls } from '../ingest/live-calls.ts'
import { IngestQueue } from '../ingest/overload.ts'
import { IngestPipeline } from '../ingest/pipeline.ts'
import { trackingApi } from '../ingest/tracking-api.ts'
import { errorBody, HttpError } from '../lib/errors.ts'
import { LazyChildLogger } from '../lib/lazy-child-logger.ts'
import { createLogger, type Logger } from '../lib/logger.ts'
import { STATUS_CODES } from '../lib/node-http.ts'
import { AccessControl } from '../manage/access-control.ts'
import { requireAccess } from '../manage/auth.ts'
import { configSchemaEndpoint } from '../manage/config-endpoints.ts'
import { managementApi } from '../manage/management-api.ts'
import { registerOpenApi } from '../manage/openapi.ts'
import { createMetrics, type Metrics, NO_METRICS } from '../observe/metrics.ts'
import { metricsEndpoint } from '../observe/metrics-endpoint.ts'
import { createTracing } from '../observe/tracing.ts'
import { ErasureRunner } from '../privacy/erasure-runner.ts'
import { PrivacyFilter } from '../privacy/privacy-filter.ts'
import { ProfileWorker } from '../profile/profile-worker.ts'
import { isStoreUnavailable } from '../store/errors.ts'
import { openStore } from '../store/open.ts'
import type { Store } from '../store/store.ts'
import { checkAdminToken, resolveAdminToken } from './admin-token.ts'
import { clientTimeoutOptions, requestTimeoutAnswer } from './client-timeouts.ts'
import { keepHeapSmall } from './heap.ts'
import { Housekeeper } from './housekeeper.ts'
import { lingerOnUnreadBodies } from './lingering-close.ts'
import { Shutdown } from './shutdown.ts'
import { isAppNavigation, registerWebApp, sendAppShell } from './web-app.ts'

/** The largest body read for any request; the Tracking API keeps its own, smaller limits. */
const MANAGEMENT_BODY_LIMIT = 1024 * 1024
/** Attempts per destination the health metrics read at a scrape (the API reads more; a scrape is frequent). */
const METRICS_HEALTH_SAMPLE = 200

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
  /** This process's metrics (`NO_METRICS` when `SLUICE_METRICS=false`). */
  metrics: Metrics
  /** The admin token in force, and whether it was generated just now (so the CLI prints it once). */
  adminToken: { value: string; generated: boolean }
  /** Starts listening; resolves with the base URL, e.g. `http://127.0.0.1:8080`. */
  listen(): Promise<string>
  /** Graceful shutdown (shutdown.ts): stops accepting, finishes in-flight work, closes the store. */
  close(): Promise<void>
}

/** Builds a ready-to-listen Sluice: opens and migrates the store, registers every API. */
export async function createSluice(
  config: Config,
  logger: Logger = createLogger(config.logLevel),
): Promise<Sluice> {
  checkAdminToken(config.adminToken)
  if (config.databaseUrl && !config.adminToken && config.role !== 'worker') {
    // Each process would otherwise generate its own token in its own data dir, and the management
    // API would answer to a different token depending on which process a request reached.
    throw new ConfigError(
      'SLUICE_ADMIN_TOKEN',
      'must be set when DATABASE_URL names a shared database, so every Sluice process accepts the same admin token',
    )
  }
  keepHeapSmall()
  const store = await openStore(config, logger)
  const adminToken = await resolveAdminToken(config)
  const ingestQueue = new IngestQueue(config.ingestQueueBytes)
  const metrics = config.metrics
    ? createMetrics({
        backlog: () => store.deliveryBacklog(),
        gatedCounts: () => store.gatedCounts(),
        endpointHealth: async () =>
          (await readEndpointHealth(store, undefined, METRICS_HEALTH_SAMPLE)).flatMap(
            ({ destination, health }) =>
              health.map((each, urlIndex) => ({ destinationId: destination.id, urlIndex, ...each })),
          ),
        ingestQueue: () => ({ bytes: ingestQueue.bytes, messages: ingestQueue.messages }),
      })
    : NO_METRICS
  const tracing = await createTracing(config.otlpTracesUrl)
  // Who may call the management API (and anything else protected by a token: see manage/auth.ts).
  const access = new AccessControl({
    store,
    adminToken: adminToken.value,
    failuresPerMinute: config.authFailuresPerMinute,
  })
  const sender = new WebhookSender({
    allowPrivate: config.allowPrivateDestinations,
    timeoutMs: config.retry.requestTimeoutMs,
    connectionsPerOrigin: config.deliveryConcurrency,
  })
  const privacy = new PrivacyFilter(store, logger)
  await privacy.start()
  const erasure = new ErasureRunner(store, logger)
  // A replay whose process died is taken over as its deliveries are: once the lease runs out.
  const replayRunner = new ReplayRunner({
    store,
    logger,
    metrics,
    leaseMs: config.deliveryLeaseMs,
    holdMs: config.replayHoldMs,
  })
  const engine = new DeliveryEngine({
    store,
    logger,
    sender,
    isWithdrawn: (delivery) => privacy.isErased(delivery),
    retry: config.retry,
    leaseMs: config.deliveryLeaseMs,
    concurrencyPerDestination: config.deliveryConcurrency,
    metrics,
    tracing,
    replays: store,
    onReplayOutcomes: () => replayRunner.wake(),
    ...(config.autoDisableHourMs === undefined ? {} : { hourMs: config.autoDisableHourMs }),
    ...(config.deliveryPollMs === undefined ? {} : { pollIntervalMs: config.deliveryPollMs }),
  })
  const alerts = new AlertSender({
    store,
    sender,
    logger,
    retry: config.retry,
    leaseMs: config.deliveryLeaseMs,
  })
  const groupCommit = new GroupCommit(store, {
    // PostgreSQL commits in parallel on separate pooled connections; SQLite has a single writer.
    maxCommitsInFlight:
      store.kind === 'postgres' ? Math.min(4, Math.max(1, Math.floor(config.postgresPoolSize / 2))) : 1,
    metrics,
  })
  const profiles = new ProfileWorker({ store, logger, refreshMs: config.audienceRefreshSeconds * 1000 })
  const housekeeper = new Housekeeper(store, logger, { retentionMs: config.retentionDays * 86_400_000 })

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // Each request's child logger is made when it first logs, not for every request.
    childLoggerFactory: (parent, bindings, options) =>
      new LazyChildLogger(parent as Logger, bindings, options) as unknown as FastifyBaseLogger,
    // The Tracking API enforces its own 500 KB limit after decompression; this is the transport cap.
    bodyLimit: MANAGEMENT_BODY_LIMIT,
    // On close, idle keep-alive connections are dropped at once (requests in flight still finish), or
    // shutdown would wait for every client's keep-alive to time out.
    forceCloseConnections: 'idle',
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
    // A client that sends too slowly is answered 408 and cut off (client-timeouts.ts).
    ...clientTimeoutOptions(config),
    clientErrorHandler: (error, socket) => {
      // Not even a parseable HTTP request, or one that did not arrive in time: answer by hand and close.
      const code = (error as NodeJS.ErrnoException).code
      const timedOut = code === 'ERR_HTTP_REQUEST_TIMEOUT' ? requestTimeoutAnswer(socket, config) : undefined
      if (timedOut === null || !socket.writable) return socket.destroy()
      const tooLarge = code === 'HPE_HEADER_OVERFLOW'
      const status = timedOut?.status ?? (tooLarge ? 431 : 400)
      const body = JSON.stringify(
        timedOut?.body ??
          (tooLarge
            ? errorBody(
                'headers_too_large',
                'The request headers are larger than 16 KB; send fewer or shorter headers.',
              )
            : errorBody(
                'bad_http',
                'The request is not valid HTTP/1.1 (request line, Content-Length or chunked encoding).',
              )),
      )
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      )
    },
  })

  // A body refused unread is still read (bounded) before the connection closes, so the client sees
  // the answer rather than a reset.
  lingerOnUnreadBodies(app)

  app.setErrorHandler((error, request, reply) => {
    if (error instanceof HttpError) {
      if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds))
      return reply.code(error.statusCode).send(errorBody(error.code, error.message, error.field))
    }
    // The domain's refusals, whichever layer raised them.
    if (error instanceof ValidationError) {
      return reply.code(400).send(errorBody(error.code, error.message, error.field))
    }
    // A configuration document: every problem with its pointer (the first also as `field`).
    if (error instanceof InvalidDocumentError) {
      const { code, message, problems } = error
      return reply.code(400).send({ error: { code, message, field: problems[0]?.field ?? '', problems } })
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
    if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply
        .code(413)
        .send(
          errorBody(
            'body_too_large',
            `The request body is larger than ${MANAGEMENT_BODY_LIMIT} bytes (1 MB), the most Sluice reads for a management call; send a smaller body.`,
          ),
        )
    }
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
  configSchemaEndpoint(app)
  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }))
  const shutdown = new Shutdown()
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    if (shutdown.stopping) {
      return reply.code(503).send({ ok: false, store: store.kind, role: config.role, stopping: true })
    }
    const ok = await store.ping().catch(() => false)
    return reply.code(ok ? 200 : 503).send({ ok, store: store.kind, role: config.role })
  })
  if (metrics.enabled) {
    // The same token check as the management API: admin token, access tokens, sessions.
    await app.register(metricsEndpoint, {
      metrics,
      authenticate: config.metricsPublic ? undefined : requireAccess(access),
    })
  }
  if (config.role !== 'worker') {
    const liveCalls = new LiveCalls()
    await app.register(trackingApi, {
      liveCalls,
      pipeline: new IngestPipeline(store, groupCommit, {
        queue: ingestQueue,
        metrics,
        tracing,
        privacy,
      }),
      findSource: (writeKey) => store.getSourceByWriteKey(writeKey),
      publicUrl: config.publicUrl,
    })
    await app.register(managementApi, {
      prefix: '/api/v1',
      store,
      access,
      testSender: engine,
      afterRegulation: () => privacy.refresh(),
      liveCalls,
      allowPrivateDestinations: config.allowPrivateDestinations,
      replays: {
        retentionMs: config.retentionDays * 86_400_000,
        // Past the delivery lease, a sender that died holding a replay's delivery no longer counts.
        cancelWaitMs: config.deliveryLeaseMs + 5_000,
        afterCreate: () => replayRunner.replayCreated(),
      },
    })
    await registerWebApp(app)
  }

  return {
    app,
    store,
    engine,
    config,
    logger,
    metrics,
    adminToken,
    async listen() {
      const address = await app.listen({ port: config.port, host: config.host })
      if (config.role !== 'worker') housekeeper.start()
      if (config.role !== 'api') {
        engine.start()
        replayRunner.start()
        alerts.start()
        await profiles.start()
      }
      await erasure.start()
      return address
    },
    close: () =>
      shutdown.run({
        app,
        housekeeper,
        erasure,
        groupCommit,
        profiles,
        engine,
        replayRunner,
        alerts,
        sender,
        tracing,
        privacy,
        store,
      }),
  }
}
