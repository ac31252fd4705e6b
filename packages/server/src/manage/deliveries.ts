/**
 * Management routes for what happens to messages after they are accepted: the delivery records of a
 * destination with their attempts, replays, a test send, and per-destination counters.
 *
 *   GET  /destinations/:id/deliveries   list, newest first, `?status=&limit=&before=`
 *   GET  /deliveries/:id                one delivery
 *   POST /deliveries/:id/replay         send one final delivery again
 *   POST /destinations/:id/replay       send many again, `?status=failed|delivered&since=`
 *   POST /destinations/:id/test         send a sample track call now, outside the records
 *   GET  /destinations/:id/stats        counters and latency
 */
import type { FastifyPluginAsync } from 'fastify'
import packageJson from '../../package.json' with { type: 'json' }
import type { DeliveryEngine } from '../deliver/engine.ts'
import { HttpError } from '../lib/errors.ts'
import { newMessageId } from '../lib/ids.ts'
import type { Delivery, Destination, Store } from '../store/store.ts'
import { destinationNotFound } from './destinations.ts'
import {
  destinationStatsSchema,
  getDeliverySchema,
  type ListDeliveriesQuery,
  listDeliveriesSchema,
  type ReplayDestinationQuery,
  replayDeliverySchema,
  replayDestinationSchema,
  testDestinationSchema,
} from './schemas.ts'
import { attemptResultView, deliveryView, statsView } from './views.ts'

/** What these routes need of the delivery engine. */
export type DeliveryControl = Pick<DeliveryEngine, 'wake' | 'sendTest' | 'configChanged'>

export interface DeliveryRoutesOptions {
  store: Store
  engine: DeliveryControl
}

interface IdParams {
  id: string
}

export const TEST_EVENT = { userId: 'sluice-test', event: 'Sluice Test Event' } as const

function deliveryNotFound(id: number): HttpError {
  return new HttpError(
    404,
    'delivery_not_found',
    `No delivery has id ${id}. List a destination's deliveries with GET /api/v1/destinations/{id}/deliveries.`,
  )
}

function isFinal(delivery: Delivery): boolean {
  return delivery.status === 'delivered' || delivery.status === 'failed'
}

function alreadyScheduled(delivery: Delivery): HttpError {
  const next =
    delivery.nextAttemptAt === null
      ? ''
      : `, next attempt at ${new Date(delivery.nextAttemptAt).toISOString()}`
  return new HttpError(
    409,
    'already_scheduled',
    `Delivery ${delivery.id} is ${delivery.status}${next}: it is already scheduled to go out, so there is ` +
      'nothing to replay. Only delivered or failed deliveries can be replayed; follow this one with ' +
      `GET /api/v1/deliveries/${delivery.id}.`,
  )
}

/** Delivery ids are positive whole numbers; anything else cannot name one. */
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

/** ISO 8601 date (`2026-01-31`, midnight UTC) or date-time with a zone (`Z` or `±hh:mm`). */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i

function parseSince(raw: string): number {
  const at = ISO_8601.test(raw) ? Date.parse(raw) : Number.NaN
  if (Number.isNaN(at)) {
    throw new HttpError(
      400,
      'validation_failed',
      `The query parameter "since" must be an ISO 8601 time with a time zone, such as 2026-01-31T12:00:00Z ` +
        `(URL-encode "+" as %2B), or a date such as 2026-01-31; got "${raw}".`,
    )
  }
  return at
}

/** The sample call `POST /destinations/:id/test` sends, already in stored (enriched) form. */
export function testMessage(now: number): Record<string, unknown> {
  return {
    type: 'track',
    userId: TEST_EVENT.userId,
    event: TEST_EVENT.event,
    properties: {},
    context: { library: { name: 'sluice', version: packageJson.version } },
    messageId: newMessageId(),
    timestamp: new Date(now).toISOString(),
  }
}

export const deliveryRoutes: FastifyPluginAsync<DeliveryRoutesOptions> = async (app, { store, engine }) => {
  const requireDestination = async (id: string): Promise<Destination> => {
    const destination = await store.getDestination(id)
    if (!destination) throw destinationNotFound(id)
    return destination
  }

  const requireDelivery = async (raw: string): Promise<Delivery> => {
    const id = parseDeliveryId(raw)
    const delivery = await store.getDelivery(id)
    if (!delivery) throw deliveryNotFound(id)
    return delivery
  }

  app.get<{ Params: IdParams; Querystring: ListDeliveriesQuery }>(
    '/destinations/:id/deliveries',
    { schema: listDeliveriesSchema },
    async (request) => {
      await requireDestination(request.params.id)
      const { status, limit, before } = request.query
      // One more than asked tells whether another page exists, so the last page says so.
      const page = await store.listDeliveries(request.params.id, {
        limit: limit + 1,
        ...(status === undefined ? {} : { status }),
        ...(before === undefined ? {} : { before }),
      })
      const deliveries = page.slice(0, limit)
      const last = deliveries.at(-1)
      return {
        deliveries: deliveries.map(deliveryView),
        nextCursor: page.length > limit && last !== undefined ? last.id : null,
      }
    },
  )

  app.get<{ Params: IdParams }>('/deliveries/:id', { schema: getDeliverySchema }, async (request) =>
    deliveryView(await requireDelivery(request.params.id)),
  )

  app.post<{ Params: IdParams }>(
    '/deliveries/:id/replay',
    { schema: replayDeliverySchema },
    async (request, reply) => {
      const delivery = await requireDelivery(request.params.id)
      if (!isFinal(delivery)) throw alreadyScheduled(delivery)
      const replayed = await store.replayDeliveries({ ids: [delivery.id] }, Date.now())
      // Read it back before waking the engine, so the answer shows the delivery as scheduled.
      const current = await store.getDelivery(delivery.id)
      if (current === null) throw deliveryNotFound(delivery.id) // deleted meanwhile
      if (replayed === 0) throw alreadyScheduled(current) // replayed by another request meanwhile
      engine.wake()
      return reply.code(202).send(deliveryView(current))
    },
  )

  app.post<{ Params: IdParams; Querystring: ReplayDestinationQuery }>(
    '/destinations/:id/replay',
    { schema: replayDestinationSchema },
    async (request, reply) => {
      const destination = await requireDestination(request.params.id)
      const { status, since } = request.query
      const replayed = await store.replayDeliveries(
        {
          destinationId: destination.id,
          status,
          ...(since === undefined ? {} : { since: parseSince(since) }),
        },
        Date.now(),
      )
      if (replayed > 0) engine.wake()
      return reply.code(202).send({ replayed })
    },
  )

  app.post<{ Params: IdParams }>(
    '/destinations/:id/test',
    { schema: testDestinationSchema },
    async (request) => {
      // Disabled destinations are tested too: that is when people check a new endpoint.
      const destination = await requireDestination(request.params.id)
      const message = testMessage(Date.now())
      const results = await engine.sendTest(destination, message)
      return {
        ok: results.some((result) => result.outcome === 'success'),
        messageId: message.messageId,
        results: results.map(attemptResultView),
      }
    },
  )

  app.get<{ Params: IdParams }>(
    '/destinations/:id/stats',
    { schema: destinationStatsSchema },
    async (request) => {
      const destination = await requireDestination(request.params.id)
      return statsView(await store.deliveryStats(destination.id))
    },
  )
}
