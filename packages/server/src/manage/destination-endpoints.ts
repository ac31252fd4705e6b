/**
 * HTTP endpoints for destinations: `/destinations` and `/destinations/:id`.
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import { unreachableUrlWarnings } from '../deliver/url-warnings.ts'
import type { DestinationService, DestinationWithStats } from '../domain/destination-service.ts'
import { canSeeSecrets } from './auth.ts'
import {
  createDestinationSchema,
  deleteDestinationSchema,
  enableUrlSchema,
  getDestinationSchema,
  listDestinationsSchema,
  updateDestinationSchema,
} from './destination-schemas.ts'
import { destinationView } from './views.ts'

export const destinationEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: {
    destinations: DestinationService
    /** `SLUICE_ALLOW_PRIVATE_DESTINATIONS`: when false, saving a URL Sluice will refuse to dial warns. */
    allowPrivateDestinations: boolean
  }
}> = async (app, { destinations, allowPrivateDestinations }) => {
  // Only admins save (viewers are refused first), so the saved view shows the URLs in full.
  const saved = async (record: DestinationWithStats) => ({
    ...destinationView(record, true),
    warnings: await unreachableUrlWarnings(record.destination.settings.webhooks, {
      allowPrivate: allowPrivateDestinations,
    }),
  })

  app.post('/destinations', { schema: createDestinationSchema }, async (request, reply) => {
    const created = await destinations.create(request.body)
    reply.header('location', `${app.prefix}/destinations/${created.destination.id}`)
    return reply.code(201).send(await saved(created))
  })

  app.get('/destinations', { schema: listDestinationsSchema }, async (request) => ({
    destinations: (await destinations.list()).map((item) => destinationView(item, canSeeSecrets(request))),
  }))

  app.get('/destinations/:id', { schema: getDestinationSchema }, async (request) =>
    destinationView(await destinations.get(request.params.id), canSeeSecrets(request)),
  )

  app.patch('/destinations/:id', { schema: updateDestinationSchema }, async (request) =>
    saved(await destinations.update(request.params.id, request.body)),
  )

  app.post('/destinations/:id/urls/:index/enable', { schema: enableUrlSchema }, async (request) =>
    destinationView(await destinations.enableUrl(request.params.id, request.params.index), true),
  )

  app.delete('/destinations/:id', { schema: deleteDestinationSchema }, async (request, reply) => {
    await destinations.delete(request.params.id)
    return reply.code(204).send(null)
  })
}
