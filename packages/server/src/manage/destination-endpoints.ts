/**
 * HTTP endpoints for destinations: `/destinations` and `/destinations/:id`.
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import type { DestinationService } from '../domain/destination-service.ts'
import { canSeeSecrets } from './auth.ts'
import {
  createDestinationSchema,
  deleteDestinationSchema,
  getDestinationSchema,
  listDestinationsSchema,
  updateDestinationSchema,
} from './destination-schemas.ts'
import { destinationView } from './views.ts'

export const destinationEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: { destinations: DestinationService }
}> = async (app, { destinations }) => {
  app.post('/destinations', { schema: createDestinationSchema }, async (request, reply) => {
    const created = await destinations.create(request.body)
    reply.header('location', `${app.prefix}/destinations/${created.destination.id}`)
    return reply.code(201).send(destinationView(created))
  })

  app.get('/destinations', { schema: listDestinationsSchema }, async (request) => ({
    destinations: (await destinations.list()).map((item) => destinationView(item, canSeeSecrets(request))),
  }))

  app.get('/destinations/:id', { schema: getDestinationSchema }, async (request) =>
    destinationView(await destinations.get(request.params.id), canSeeSecrets(request)),
  )

  app.patch('/destinations/:id', { schema: updateDestinationSchema }, async (request) =>
    destinationView(await destinations.update(request.params.id, request.body)),
  )

  app.delete('/destinations/:id', { schema: deleteDestinationSchema }, async (request, reply) => {
    await destinations.delete(request.params.id)
    return reply.code(204).send(null)
  })
}
