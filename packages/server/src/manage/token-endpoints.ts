/**
 * HTTP endpoints for access tokens: `/tokens` and `/tokens/:id`. Admins only, reads included.
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import type { TokenService } from '../domain/token-service.ts'
import { createTokenSchema, deleteTokenSchema, listTokensSchema } from './access-schemas.ts'
import { requireAdmin } from './auth.ts'
import { tokenView } from './views.ts'

export const tokenEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: { tokens: TokenService }
}> = async (app, { tokens }) => {
  app.addHook('preHandler', requireAdmin)

  app.post('/tokens', { schema: createTokenSchema }, async (request, reply) => {
    const { record, token } = await tokens.create(request.body)
    reply.header('location', `${app.prefix}/tokens/${record.id}`)
    return reply.code(201).send({ ...tokenView(record), token })
  })

  app.get('/tokens', { schema: listTokensSchema }, async () => ({
    tokens: (await tokens.list()).map(tokenView),
  }))

  app.delete('/tokens/:id', { schema: deleteTokenSchema }, async (request, reply) => {
    await tokens.revoke(request.params.id)
    return reply.code(204).send(null)
  })
}
