/**
 * Management routes for destinations: `/destinations` and `/destinations/:id`.
 */
import type { FastifyPluginAsync } from 'fastify'
import { validateWebhooksSettings } from '../deliver/webhook-settings.ts'
import { HttpError, ValidationError } from '../lib/errors.ts'
import type { DeliveryStats, Destination, DestinationPatch, Store } from '../store/store.ts'
import type { DeliveryControl } from './deliveries.ts'
import {
  type CreateDestinationBody,
  createDestinationSchema,
  deleteDestinationSchema,
  getDestinationSchema,
  listDestinationsSchema,
  type UpdateDestinationBody,
  updateDestinationSchema,
} from './schemas.ts'
import { cleanName } from './validation.ts'
import { type DestinationView, destinationView } from './views.ts'

interface IdParams {
  id: string
}

const NO_DELIVERIES_YET: DeliveryStats = {
  pending: 0,
  retrying: 0,
  delivered: 0,
  failed: 0,
  deadLettered: 0,
  latencyP50Ms: null,
  latencyP95Ms: null,
}

export function destinationNotFound(id: string): HttpError {
  return new HttpError(
    404,
    'destination_not_found',
    `No destination has id "${id}". List the existing destinations with GET /api/v1/destinations.`,
  )
}

/** Refuses the first id that names no source, so a destination is never connected to nothing. */
async function requireSources(store: Store, sourceIds: string[]): Promise<void> {
  const found = await Promise.all(sourceIds.map((id) => store.getSource(id)))
  const missing = found.indexOf(null)
  if (missing !== -1) {
    throw new ValidationError(
      `/sourceIds/${missing}`,
      `sourceIds[${missing}]: no source has id "${sourceIds[missing]}". Use the id of an existing source (GET /api/v1/sources).`,
    )
  }
}

/** Destination changes take effect in the delivery engine at once, not on its next poll. */
export const destinationRoutes: FastifyPluginAsync<{
  store: Store
  engine: Pick<DeliveryControl, 'configChanged'>
}> = async (app, { store, engine }) => {
  const withStats = async (destination: Destination): Promise<DestinationView> =>
    destinationView(destination, await store.deliveryStats(destination.id))

  app.post<{ Body: CreateDestinationBody }>(
    '/destinations',
    { schema: createDestinationSchema },
    async (request, reply) => {
      const { name, type, enabled = true, sourceIds = [], settings } = request.body
      const cleanedName = cleanName(name)
      const validSettings = validateWebhooksSettings(settings)
      await requireSources(store, sourceIds)
      const destination = await store.createDestination({
        name: cleanedName,
        type,
        enabled,
        sourceIds,
        settings: validSettings,
      })
      engine.configChanged()
      reply.header('location', `${app.prefix}/destinations/${destination.id}`)
      return reply.code(201).send(destinationView(destination, NO_DELIVERIES_YET))
    },
  )

  app.get('/destinations', { schema: listDestinationsSchema }, async () => {
    const destinations = await store.listDestinations()
    return { destinations: await Promise.all(destinations.map(withStats)) }
  })

  app.get<{ Params: IdParams }>('/destinations/:id', { schema: getDestinationSchema }, async (request) => {
    const destination = await store.getDestination(request.params.id)
    if (!destination) throw destinationNotFound(request.params.id)
    return withStats(destination)
  })

  app.patch<{ Params: IdParams; Body: UpdateDestinationBody }>(
    '/destinations/:id',
    { schema: updateDestinationSchema },
    async (request) => {
      const current = await store.getDestination(request.params.id)
      if (!current) throw destinationNotFound(request.params.id)
      const { name, enabled, sourceIds, settings } = request.body
      const patch: DestinationPatch = {}
      if (name !== undefined) patch.name = cleanName(name)
      if (enabled !== undefined) patch.enabled = enabled
      if (settings !== undefined) patch.settings = validateWebhooksSettings(settings, current.settings)
      if (sourceIds !== undefined) {
        await requireSources(store, sourceIds)
        patch.sourceIds = sourceIds
      }
      const updated = await store.updateDestination(request.params.id, patch)
      if (!updated) throw destinationNotFound(request.params.id)
      engine.configChanged()
      return withStats(updated)
    },
  )

  app.delete<{ Params: IdParams }>(
    '/destinations/:id',
    { schema: deleteDestinationSchema },
    async (request, reply) => {
      if (!(await store.deleteDestination(request.params.id))) throw destinationNotFound(request.params.id)
      engine.configChanged()
      return reply.code(204).send()
    },
  )
}
