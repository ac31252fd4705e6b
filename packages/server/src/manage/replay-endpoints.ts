/**
 * HTTP endpoints of replays (stored calls sent again to a destination):
 *
 *   POST   /destinations/:id/replays             start one (admin)
 *   GET    /destinations/:id/replays             list, newest first
 *   GET    /destinations/:id/replays/:replayId   one, with its progress
 *   DELETE /destinations/:id/replays/:replayId   cancel (admin)
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import { ValidationError } from '../domain/errors.ts'
import type { ReplayService } from '../domain/replay-service.ts'
import type { Replay } from '../domain/replays.ts'
import {
  cancelReplaySchema,
  getReplaySchema,
  listReplaysSchema,
  type ReplayView,
  startReplaySchema,
} from './replay-schemas.ts'
import { ISO_8601 } from './series-query.ts'

const iso = (at: number) => new Date(at).toISOString()

/** A body time (`from`, `to`) as epoch ms. */
function bodyTime(raw: string, name: 'from' | 'to'): number {
  const at = ISO_8601.test(raw) ? Date.parse(raw) : Number.NaN
  if (Number.isNaN(at))
    throw new ValidationError(
      `/${name}`,
      `"${name}" must be an ISO 8601 time with a time zone, such as 2026-01-31T12:00:00Z, or a date such as 2026-01-31; got "${raw}".`,
    )
  return at
}

export function replayView(replay: Replay): ReplayView {
  return {
    ...replay,
    sourceIds: [...replay.sourceIds],
    types: replay.types === null ? null : [...replay.types],
    events: replay.events === null ? null : [...replay.events],
    from: iso(replay.from),
    to: iso(replay.to),
    createdAt: iso(replay.createdAt),
    finishedAt: replay.finishedAt === null ? null : iso(replay.finishedAt),
  }
}

export const replayEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: { replays: ReplayService }
}> = async (app, { replays }) => {
  app.post('/destinations/:id/replays', { schema: startReplaySchema }, async (request, reply) => {
    const { from, to, sourceIds, types, events, force } = request.body
    const replay = await replays.start({
      destinationId: request.params.id,
      from: bodyTime(from, 'from'),
      to: bodyTime(to, 'to'),
      ...(sourceIds === undefined ? {} : { sourceIds }),
      ...(types === undefined ? {} : { types }),
      ...(events === undefined ? {} : { events }),
      force: force ?? false,
    })
    return reply.code(201).send(replayView(replay))
  })

  app.get('/destinations/:id/replays', { schema: listReplaysSchema }, async (request) => ({
    replays: (await replays.list(request.params.id)).map(replayView),
  }))

  app.get('/destinations/:id/replays/:replayId', { schema: getReplaySchema }, async (request) =>
    replayView(await replays.get(request.params.id, request.params.replayId)),
  )

  app.delete('/destinations/:id/replays/:replayId', { schema: cancelReplaySchema }, async (request) =>
    replayView(await replays.cancel(request.params.id, request.params.replayId)),
  )
}
