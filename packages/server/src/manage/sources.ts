/**
 * Management routes for sources: `/sources` and `/sources/:id`.
 */
import type { FastifyPluginAsync } from 'fastify'
import { HttpError } from '../lib/errors.ts'
import type { Source, SourceStats, Store } from '../store/store.ts'
import {
  type CreateSourceBody,
  createSourceSchema,
  deleteSourceSchema,
  getSourceSchema,
  listSourcesSchema,
  rotateWriteKeySchema,
  type UpdateSourceBody,
  updateSourceSchema,
} from './schemas.ts'
import { cleanName } from './validation.ts'
import { type SourceView, sourceView } from './views.ts'

interface IdParams {
  id: string
}

const NO_TRAFFIC_YET: SourceStats = { accepted: 0, duplicates: 0, rejected: 0 }

function sourceNotFound(id: string): HttpError {
  return new HttpError(
    404,
    'source_not_found',
    `No source has id "${id}". List the existing sources with GET /api/v1/sources.`,
  )
}

export const sourceRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  const withStats = async (source: Source): Promise<SourceView> =>
    sourceView(source, await store.getSourceStats(source.id))

  app.post<{ Body: CreateSourceBody }>('/sources', { schema: createSourceSchema }, async (request, reply) => {
    const { name, enabled = true } = request.body
    const source = await store.createSource({ name: cleanName(name), enabled })
    reply.header('location', `${app.prefix}/sources/${source.id}`)
    return reply.code(201).send(sourceView(source, NO_TRAFFIC_YET))
  })

  app.get('/sources', { schema: listSourcesSchema }, async () => {
    const sources = await store.listSources()
    return { sources: await Promise.all(sources.map(withStats)) }
  })

  app.get<{ Params: IdParams }>('/sources/:id', { schema: getSourceSchema }, async (request) => {
    const source = await store.getSource(request.params.id)
    if (!source) throw sourceNotFound(request.params.id)
    return withStats(source)
  })

  app.patch<{ Params: IdParams; Body: UpdateSourceBody }>(
    '/sources/:id',
    { schema: updateSourceSchema },
    async (request) => {
      const { name, enabled, rotateWriteKey } = request.body
      const source = await store.updateSource(request.params.id, {
        ...(name === undefined ? {} : { name: cleanName(name) }),
        ...(enabled === undefined ? {} : { enabled }),
        ...(rotateWriteKey === true ? { rotateWriteKey } : {}),
      })
      if (!source) throw sourceNotFound(request.params.id)
      return withStats(source)
    },
  )

  app.post<{ Params: IdParams }>(
    '/sources/:id/rotate-write-key',
    { schema: rotateWriteKeySchema },
    async (request) => {
      const source = await store.updateSource(request.params.id, { rotateWriteKey: true })
      if (!source) throw sourceNotFound(request.params.id)
      return withStats(source)
    },
  )

  app.delete<{ Params: IdParams }>('/sources/:id', { schema: deleteSourceSchema }, async (request, reply) => {
    if (!(await store.deleteSource(request.params.id))) throw sourceNotFound(request.params.id)
    return reply.code(204).send()
  })
}
