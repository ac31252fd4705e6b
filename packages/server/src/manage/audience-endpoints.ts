/**
 * HTTP endpoints for audiences: `/audiences`, `/audiences/preview`, `/audiences/:id` and its `/members`.
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import type { AudienceService } from '../domain/audience-service.ts'
import {
  createAudienceSchema,
  deleteAudienceSchema,
  getAudienceSchema,
  listAudienceMembersSchema,
  listAudiencesSchema,
  previewAudienceSchema,
  updateAudienceSchema,
} from './audience-schemas.ts'
import { audienceView, profileIdentitiesView } from './views.ts'

export const audienceEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: { audiences: AudienceService }
}> = async (app, { audiences }) => {
  app.post('/audiences', { schema: createAudienceSchema }, async (request, reply) => {
    const created = await audiences.create(request.body)
    reply.header('location', `${app.prefix}/audiences/${created.audience.id}`)
    return reply.code(201).send(audienceView(created))
  })

  app.post('/audiences/preview', { schema: previewAudienceSchema }, async (request) => {
    const preview = await audiences.preview(request.body)
    return { ...preview, sampleMembers: preview.sampleMembers.map(profileIdentitiesView) }
  })

  app.get('/audiences', { schema: listAudiencesSchema }, async () => ({
    audiences: (await audiences.list()).map(audienceView),
  }))

  app.get('/audiences/:id', { schema: getAudienceSchema }, async (request) =>
    audienceView(await audiences.get(request.params.id)),
  )

  app.get('/audiences/:id/members', { schema: listAudienceMembersSchema }, async (request) => {
    const page = await audiences.members(request.params.id, request.query)
    return { members: page.members.map(profileIdentitiesView), nextCursor: page.nextCursor }
  })

  app.patch('/audiences/:id', { schema: updateAudienceSchema }, async (request) =>
    audienceView(await audiences.update(request.params.id, request.body)),
  )

  app.delete('/audiences/:id', { schema: deleteAudienceSchema }, async (request, reply) => {
    await audiences.delete(request.params.id)
    return reply.code(204).send(null)
  })
}
