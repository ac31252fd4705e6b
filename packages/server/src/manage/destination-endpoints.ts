/**
 * HTTP endpoints for destinations: `/destinations`, `/destinations/:id` and the rotation of its
 * signing secrets (`/destinations/:id/secrets/…`).
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import { unreachableUrlWarnings } from '../deliver/url-warnings.ts'
import type { DestinationService, SavedDestination } from '../domain/destination-service.ts'
import { canSeeSecrets } from './auth.ts'
import {
  createDestinationSchema,
  deleteDestinationSchema,
  enableUrlSchema,
  getDestinationSchema,
  listDestinationsSchema,
  listRotationsSchema,
  rotateSecretSchema,
  updateDestinationSchema,
} from './destination-schemas.ts'
import { destinationView, rotationView } from './views.ts'

export const destinationEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: {
    destinations: DestinationService
    /** `SLUICE_ALLOW_PRIVATE_DESTINATIONS`: when false, saving a URL Sluice will refuse to dial warns. */
    allowPrivateDestinations: boolean
  }
}> = async (app, { destinations, allowPrivateDestinations }) => {
  // Only admins save (viewers are refused first), so the saved view shows the URLs in full.
  // A Standard Webhooks secret this save made is shown here, this once.
  const saved = async (record: SavedDestination) => ({
    ...destinationView(record, true),
    ...(record.generatedSecret === undefined ? {} : { standardWebhooksSecret: record.generatedSecret }),
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

  app.post('/destinations/:id/secrets/rotate', { schema: rotateSecretSchema }, async (request) => {
    const { secret, rotation } = await destinations.rotateSecret(request.params.id, request.body)
    return { secret, rotation: rotationView(rotation) }
  })

  app.get('/destinations/:id/secrets/rotations', { schema: listRotationsSchema }, async (request) => ({
    rotations: (await destinations.rotations(request.params.id)).map(rotationView),
  }))

  app.delete('/destinations/:id', { schema: deleteDestinationSchema }, async (request, reply) => {
    await destinations.delete(request.params.id)
    return reply.code(204).send(null)
  })
}
