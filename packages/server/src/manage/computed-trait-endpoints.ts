/**
 * HTTP endpoints for computed traits: `/computed-traits` and `/computed-traits/:id`.
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import type { ComputedTraitService } from '../domain/computed-trait-service.ts'
import type { WhereCondition } from '../domain/computed-traits.ts'
import {
  createComputedTraitSchema,
  deleteComputedTraitSchema,
  getComputedTraitSchema,
  listComputedTraitsSchema,
  updateComputedTraitSchema,
} from './computed-trait-schemas.ts'
import { computedTraitView } from './views.ts'

export const computedTraitEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: { computedTraits: ComputedTraitService }
}> = async (app, { computedTraits }) => {
  app.post('/computed-traits', { schema: createComputedTraitSchema }, async (request, reply) => {
    const { where, ...rest } = request.body
    const created = await computedTraits.create({ ...rest, where: where as WhereCondition[] | undefined })
    reply.header('location', `${app.prefix}/computed-traits/${created.id}`)
    return reply.code(201).send(computedTraitView(created))
  })

  app.get('/computed-traits', { schema: listComputedTraitsSchema }, async () => ({
    computedTraits: (await computedTraits.list()).map(computedTraitView),
  }))

  app.get('/computed-traits/:id', { schema: getComputedTraitSchema }, async (request) =>
    computedTraitView(await computedTraits.get(request.params.id)),
  )

  app.patch('/computed-traits/:id', { schema: updateComputedTraitSchema }, async (request) =>
    computedTraitView(await computedTraits.update(request.params.id, request.body)),
  )

  app.delete('/computed-traits/:id', { schema: deleteComputedTraitSchema }, async (request, reply) => {
    await computedTraits.delete(request.params.id)
    return reply.code(204).send(null)
  })
}
