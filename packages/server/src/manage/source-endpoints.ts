/**
 * HTTP endpoints for sources: `/sources`, `/sources/:id`, `/sources/:id/rotate-write-key` and
 * `/sources/:id/stats/series` (calls over time).
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import type { SourceService } from '../domain/source-service.ts'
import { canSeeSecrets } from './auth.ts'
import { seriesAnswer, seriesRange } from './series-query.ts'
import {
  createSourceSchema,
  deleteSourceSchema,
  getSourceSchema,
  listSourcesSchema,
  rotateWriteKeySchema,
  sourceSeriesSchema,
  updateSourceSchema,
} from './source-schemas.ts'
import { sourceView } from './views.ts'

export const sourceEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: {
    sources: SourceService
    /** Called after a source is deleted (the live debugger forgets its recent calls). Default: nothing. */
    onDeleted?: (id: string) => void
  }
}> = async (app, { sources, onDeleted }) => {
  app.post('/sources', { schema: createSourceSchema }, async (request, reply) => {
    const created = await sources.create(request.body)
    reply.header('location', `${app.prefix}/sources/${created.source.id}`)
    return reply.code(201).send(sourceView(created))
  })

  app.get('/sources', { schema: listSourcesSchema }, async (request) => ({
    sources: (await sources.list()).map((source) => sourceView(source, canSeeSecrets(request))),
  }))

  app.get('/sources/:id', { schema: getSourceSchema }, async (request) =>
    sourceView(await sources.get(request.params.id), canSeeSecrets(request)),
  )

  app.patch('/sources/:id', { schema: updateSourceSchema }, async (request) =>
    sourceView(await sources.update(request.params.id, request.body)),
  )

  app.post('/sources/:id/rotate-write-key', { schema: rotateWriteKeySchema }, async (request) =>
    sourceView(await sources.rotateWriteKey(request.params.id)),
  )

  app.get('/sources/:id/stats/series', { schema: sourceSeriesSchema }, async (request) => {
    const range = seriesRange(request.query)
    return seriesAnswer(range, await sources.series(request.params.id, range.from, range.to, range.step))
  })

  app.delete('/sources/:id', { schema: deleteSourceSchema }, async (request, reply) => {
    await sources.delete(request.params.id)
    onDeleted?.(request.params.id)
    return reply.code(204).send(null)
  })
}
