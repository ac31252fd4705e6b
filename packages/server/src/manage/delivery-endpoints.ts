/**
 * HTTP endpoints for what happens to messages after they are accepted: the delivery records of a
 * destination with their attempts, replays, a test send, and per-destination counters.
 *
 *   GET  /destinations/:id/deliveries   list, newest first, `?status=&limit=&before=`
 *   GET  /deliveries/:id                one delivery
 *   GET  /deliveries/:id/request        the body and headers it sends
 *   POST /deliveries/:id/replay         send one final delivery again
 *   POST /destinations/:id/replay       send many again, `?status=failed|delivered&since=`
 *   POST /destinations/:id/test         send a sample track call now, outside the records
 *   GET  /destinations/:id/stats        counters and latency
 *   GET  /destinations/:id/stats/series figures over time, `?from=&to=&step=`
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import { deliveryRequest } from '../deliver/delivery-request.ts'
import type { TestEventService } from '../deliver/test-event.ts'
import type { DeliveryService } from '../domain/delivery-service.ts'
import type { DeliveryStore } from '../domain/delivery-store.ts'
import type { MessageStore } from '../domain/message-store.ts'
import { HttpError } from '../lib/errors.ts'
import { canSeeSecrets } from './auth.ts'
import {
  deliveryRequestSchema,
  destinationSeriesSchema,
  destinationStatsSchema,
  getDeliverySchema,
  listDeliveriesSchema,
  replayDeliverySchema,
  replayDestinationSchema,
  testDestinationSchema,
} from './delivery-schemas.ts'
import { parseTime, seriesAnswer, seriesRange } from './series-query.ts'
import { attemptResultView, deliveryRequestView, deliveryView, statsView } from './views.ts'

export interface DeliveryEndpointsOptions {
  store: DeliveryStore & MessageStore
  deliveries: DeliveryService
  testEvents: TestEventService
}

/** Delivery ids are positive whole numbers; anything else in the path cannot name one. */
function parseDeliveryId(raw: string): number {
  const id = /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(id)) {
    throw new HttpError(
      400,
      'invalid_delivery_id',
      `"${raw}" is not a delivery id: delivery ids are whole numbers such as 42, as listed by GET /api/v1/destinations/{id}/deliveries.`,
    )
  }
  return id
}

export const deliveryEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: DeliveryEndpointsOptions
}> = async (app, { store, deliveries, testEvents }) => {
  app.get('/destinations/:id/deliveries', { schema: listDeliveriesSchema }, async (request) => {
    const { since, until, ...query } = request.query
    const page = await deliveries.list(request.params.id, {
      ...query,
      ...(since === undefined ? {} : { since: parseTime(since) }),
      ...(until === undefined ? {} : { until: parseTime(until, 'until') }),
    })
    const reveal = canSeeSecrets(request)
    return {
      deliveries: page.deliveries.map((delivery) => deliveryView(delivery, reveal)),
      nextCursor: page.nextCursor,
    }
  })

  app.get('/deliveries/:id', { schema: getDeliverySchema }, async (request) =>
    deliveryView(await deliveries.get(parseDeliveryId(request.params.id)), canSeeSecrets(request)),
  )

  app.get('/deliveries/:id/request', { schema: deliveryRequestSchema }, async (request) =>
    deliveryRequestView(
      await deliveryRequest(store, parseDeliveryId(request.params.id)),
      canSeeSecrets(request),
    ),
  )

  app.post('/deliveries/:id/replay', { schema: replayDeliverySchema }, async (request, reply) => {
    const replayed = await deliveries.replay(parseDeliveryId(request.params.id))
    return reply.code(202).send(deliveryView(replayed, canSeeSecrets(request)))
  })

  app.post('/destinations/:id/replay', { schema: replayDestinationSchema }, async (request, reply) => {
    const { status, since } = request.query
    const replayed = await deliveries.replayDestination(request.params.id, {
      status,
      ...(since === undefined ? {} : { since: parseTime(since) }),
    })
    return reply.code(202).send({ replayed })
  })

  app.post('/destinations/:id/test', { schema: testDestinationSchema }, async (request) => {
    const { ok, messageId, results } = await testEvents.send(request.params.id)
    const reveal = canSeeSecrets(request)
    return { ok, messageId, results: results.map((result) => attemptResultView(result, reveal)) }
  })

  app.get('/destinations/:id/stats/series', { schema: destinationSeriesSchema }, async (request) => {
    const range = seriesRange(request.query)
    return seriesAnswer(range, await deliveries.series(request.params.id, range.from, range.to, range.step))
  })

  app.get('/destinations/:id/stats', { schema: destinationStatsSchema }, async (request) =>
    statsView(await deliveries.stats(request.params.id)),
  )
}
