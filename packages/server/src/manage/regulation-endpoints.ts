/**
 * HTTP endpoints for privacy: `/regulations`, `/regulations/:id` and `/suppressions`.
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import type { RegulationService } from '../domain/regulation-service.ts'
import {
  createRegulationSchema,
  getRegulationSchema,
  listRegulationsSchema,
  listSuppressionsSchema,
} from './regulation-schemas.ts'
import { regulationView, suppressionView } from './views.ts'

export const regulationEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: { regulations: RegulationService }
}> = async (app, { regulations }) => {
  app.post('/regulations', { schema: createRegulationSchema }, async (request, reply) => {
    const { regulationType, subjectIds, sourceIds } = request.body
    const created = await regulations.create({ regulationType, subjectIds, sourceIds })
    reply.header('location', `${app.prefix}/regulations/${created.id}`)
    return reply.code(201).send(regulationView(created))
  })

  app.get('/regulations', { schema: listRegulationsSchema }, async (request) => ({
    regulations: (await regulations.list(request.query)).map(regulationView),
  }))

  app.get('/regulations/:id', { schema: getRegulationSchema }, async (request) =>
    regulationView(await regulations.get(request.params.id)),
  )

  app.get('/suppressions', { schema: listSuppressionsSchema }, async () => ({
    suppressions: (await regulations.suppressions()).map(suppressionView),
  }))
}
