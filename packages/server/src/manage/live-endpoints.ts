/**
 * `GET /sources/:id/live`: the live debugger's stream. Server-Sent Events, one `calls` event per
 * Tracking API request for the source, carrying each call with whether it was accepted and, if not, why.
 * Viewers may watch: the calls never carry the write key.
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import type { SourceService } from '../domain/source-service.ts'
import type { LiveCalls } from '../ingest/live-calls.ts'
import { ADMIN_SECURITY, idParams, withNotFound } from './common-schemas.ts'

/** A comment line this often keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000
/** A client that reads slower than calls arrive skips events rather than growing Sluice's memory. */
const MAX_UNSENT_BYTES = 1024 * 1024

const liveSchema = {
  tags: ['Sources'],
  summary: "Watch a source's calls as they arrive",
  description:
    "A `text/event-stream`: first one `history` event, `data` a JSON array of the source's last 100 calls (oldest first), then one `calls` event per Tracking API request for this source, `data` a JSON array of `{at, status, reason, type, call}` (status `accepted` or `rejected`; reason why it was rejected; type the call's type, also for calls to `/v1/track` and the other single-call paths). Calls are those reaching the Sluice process serving the stream; the recent calls are kept in its memory.",
  security: ADMIN_SECURITY,
  params: idParams,
  response: { 200: { description: 'The event stream.', type: 'string' }, ...withNotFound },
} as const

export const liveEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: { sources: SourceService; liveCalls: LiveCalls }
}> = async (app, { sources, liveCalls }) => {
  // Streams never end by themselves: closing Sluice ends them, or it would wait for every open debugger.
  const open = new Set<() => void>()
  app.addHook('preClose', async () => {
    for (const end of open) end()
  })
  app.get('/sources/:id/live', { schema: liveSchema }, async (request, reply) => {
    const { source } = await sources.get(request.params.id)
    reply.hijack()
    const raw = reply.raw
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    })
    raw.write(': watching\n\n')
    // The recent calls first (replacing what a reconnecting page holds), then each new one.
    raw.write(`event: history\ndata: ${JSON.stringify(liveCalls.history(source.id))}\n\n`)
    const stop = liveCalls.watch(source.id, (calls) => {
      if (raw.writableLength > MAX_UNSENT_BYTES) return
      raw.write(`event: calls\ndata: ${JSON.stringify(calls)}\n\n`)
    })
    const heartbeat = setInterval(() => raw.write(': still here\n\n'), HEARTBEAT_MS)
    const end = () => {
      clearInterval(heartbeat)
      stop()
      open.delete(end)
      raw.end()
    }
    open.add(end)
    request.raw.once('close', end)
    raw.once('close', end)
  })
}
