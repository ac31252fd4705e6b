import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'

/**
 * Lingering close: when Sluice answers a request before reading its body (a body over the size
 * limit, refused on its `Content-Length`), the rest of the body is still read, and thrown away, so
 * that the client gets to read the answer.
 *
 * Why: Fastify answers such a request at once with `Connection: close`, and Node then closes the
 * socket while the client may still be sending. A socket closed with unread data is reset (TCP RST),
 * so a client still writing its body sees EPIPE or ECONNRESET instead of the 413 that says what was
 * wrong and how to fix it. HTTP/1.1 asks servers to close in stages instead (RFC 9112 §9.6): answer,
 * keep reading what the client sends, then close.
 *
 * Bounded, so that a refused body cannot hold a connection for ever: once the answer is sent, at most
 * `LINGER_BYTES` more are read, for at most `LINGER_MS`; past either the socket is destroyed (that
 * client then gets a reset, having sent far more than it was told not to send). Read to its end in
 * time, the body leaves the connection usable for the client's next request.
 */

/** The most of a refused body read after the answer: a few times the largest limit (1 MB). */
export const LINGER_BYTES = 16 * 1024 * 1024
/** The longest a refused body is read after the answer. */
export const LINGER_MS = 10_000

/** Sockets answered before their request's body was read, whose body is still being drained. */
const lingering = new WeakSet<Socket>()

/**
 * True when the socket's request was answered before its body was read (that body is being drained
 * now): nothing more may be written on it, not even a timeout's 408 (client-timeouts.ts).
 */
export function isLingering(socket: Socket): boolean {
  return lingering.has(socket)
}

export function lingerOnUnreadBodies(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete) {
      // Closing would reset the connection under the client's feet; the bounded read replaces it.
      if (reply.getHeader('connection') === 'close') reply.removeHeader('connection')
      readTheRest(request.raw)
    }
    done(null, payload)
  })
}

/**
 * Reads and drops the rest of a body, within the bounds. (Left alone, Node would drop it too, but
 * without a bound, and out of sight: a body it drops emits no data to count.)
 */
function readTheRest(body: IncomingMessage): void {
  const socket = body.socket
  lingering.add(socket)
  let bytes = 0
  const timer = setTimeout(() => socket.destroy(), LINGER_MS)
  timer.unref()
  body.on('data', (chunk: Buffer) => {
    bytes += chunk.length
    if (bytes > LINGER_BYTES) socket.destroy()
  })
  body.once('close', () => {
    clearTimeout(timer)
    lingering.delete(socket)
  })
}
