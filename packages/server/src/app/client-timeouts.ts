import type { ServerOptions } from 'node:http'
import type { Socket } from 'node:net'
import type { Config } from '../config.ts'
import { errorBody } from '../lib/errors.ts'
import { isLingering } from './lingering-close.ts'

/**
 * How long a client may take to send a request: its headers within `clientHeadersTimeoutMs` (10 s),
 * all of it, body included, within `clientRequestTimeoutMs` (30 s), both from the request's first
 * byte. Past either, Node answers through `clientError` (see `requestTimeoutAnswer`) and the connection
 * is closed. Without them, a client sending a body a byte at a time held its connection (and the
 * memory of a half-read body) for as long as it liked: 2,000 such sockets stayed open for minutes.
 *
 * What does not count: the time Sluice takes to answer (Node stops timing a request once it has
 * been read in full, so a live-debugger stream stays open), and an idle keep-alive connection between
 * requests (Fastify's `keepAliveTimeout`, 72 s, unchanged). A body refused on its Content-Length is
 * read for at most 10 s after the answer (lingering-close.ts), within these bounds at their defaults.
 */
export function clientTimeoutOptions(
  config: Pick<Config, 'clientHeadersTimeoutMs' | 'clientRequestTimeoutMs'>,
): { requestTimeout: number; http: ServerOptions } {
  const shortest = Math.min(config.clientHeadersTimeoutMs, config.clientRequestTimeoutMs)
  return {
    requestTimeout: config.clientRequestTimeoutMs,
    http: {
      headersTimeout: config.clientHeadersTimeoutMs,
      // Node looks for expired requests this often (30 s by default, which would let a 10-second
      // timeout run to 40): a tenth of the shortest timeout, at most once a second.
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(shortest / 10))),
    },
  }
}

/**
 * What to write on a socket whose request timed out (`ERR_HTTP_REQUEST_TIMEOUT` in `clientError`),
 * or null when an answer has already been sent or started on it (a request refused before its body
 * was read, which is being drained: a 413, or a 401 from the management API): then the socket is only
 * closed, since a second answer would follow the first on the wire.
 */
export function requestTimeoutAnswer(
  socket: Socket,
  config: Pick<Config, 'clientHeadersTimeoutMs' | 'clientRequestTimeoutMs'>,
): { status: number; body: ReturnType<typeof errorBody> } | null {
  // Node's own default handler checks the response in progress the same way.
  const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (isLingering(socket) || response?.headersSent) return null
  return {
    status: 408,
    body: errorBody(
      'request_timeout',
      `The request was not received in time: Sluice waits ${seconds(config.clientHeadersTimeoutMs)} for a request's headers and ${seconds(config.clientRequestTimeoutMs)} for all of it. Send it again, without pausing mid-request.`,
    ),
  }
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`
}
