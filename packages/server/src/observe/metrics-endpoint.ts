/**
 * `GET /metrics`: the Prometheus text exposition of this process's metrics (metrics.ts). It asks for
 * an access token, checked exactly as the management API checks it, unless the operator made it
 * public (`SLUICE_METRICS_PUBLIC=true`, for a scraper on a private network).
 */
import type { FastifyPluginAsync, onRequestHookHandler } from 'fastify'
import type { Metrics } from './metrics.ts'

export interface MetricsEndpointOptions {
  metrics: Metrics
  /** The management API's token check; absent when the endpoint is public. */
  authenticate: onRequestHookHandler | undefined
}

export const metricsEndpoint: FastifyPluginAsync<MetricsEndpointOptions> = async (
  app,
  { metrics, authenticate },
) => {
  app.get(
    '/metrics',
    { schema: { hide: true }, ...(authenticate ? { onRequest: authenticate } : {}) },
    async (_request, reply) => reply.type(metrics.contentType).send(await metrics.render()),
  )
}
