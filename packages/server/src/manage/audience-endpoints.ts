/**
 * HTTP endpoints for audiences: `/audiences`, `/audiences/preview` and `/audiences/:id`.
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import type { AudienceService } from '../domain/audience-service.ts'
import {
  createAudienceSchema,
  deleteAudienceSchema,
  getAudienceSchema,
  listAudiencesSchema,
  previewAudienceSchema,
  updateAudienceSchema,
} from './audience-schemas.ts'
import { audienceView } from './views.ts'

export const audienceEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: { audiences: AudienceService }
}> = async (app, { audiences }) => {
  app.post('/audiences', { schema: createAudienceSchema }, async (request, reply) => {
    const created = await audiences.create(request.body)
    reply.header('location', `${app.prefix}/audiences/${created.audience.id}`)
    return reply.code(201).send(audienceView(created))
  })

  app.post('/audiences/preview', { schema: previewAudienceSchema }, async (request) =>
    audiences.preview(request.body),
  )

  app.get('/audiences', { schema: listAudiencesSchema }, async () => ({
    audiences: (await audiences.list()).map(audienceView),
  }))

  app.get('/audiences/:id', { schema: getAudienceSchema }, async (request) =>
    audienceView(await audiences.get(request.params.id)),
  )

  app.patch('/audiences/:id', { schema: updateAudienceSchema }, async (request) =>
    audienceView(await audiences.update(request.params.id, request.body)),
  )

  app.delete('/audiences/:id', { schema: deleteAudienceSchema }, async (request, reply) => {
    await audiences.delete(request.params.id)
    return reply.code(204).send(null)
  })
}
