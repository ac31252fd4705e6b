import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gunzipSync } from 'node:zlib'

/** One request as the test server saw it. */
export interface Received {
  method: string
  path: string
  headers: IncomingHttpHeaders
  /** Bytes on the wire (still gzipped when the client gzipped). */
  raw: Buffer
  /** The JSON body, inflated when `Content-Encoding: gzip`. */
  body: { batch: Message[]; sentAt?: string; [key: string]: unknown }
  /** When the request's body had fully arrived (Date.now()). */
  at: number
}

export type Message = Record<string, unknown> & { messageId: string; type: string }

/** How to answer a request; the default is `200 {"success":true}`. */
export interface Reply {
  status?: number
  headers?: Record<string, string>
  body?: string | object
  /** Wait this long before answering. */
  delay?: number
  /** Drop the connection without answering (a network error for the client). */
  destroy?: boolean
}

export type Responder = (request: Received, index: number) => Reply | Promise<Reply>

export interface TestServer {
  url: string
  requests: Received[]
  /** Every message received, in arrival order (repeats included). */
  messages(): Message[]
  /**
   * Times a messageId arrived while an earlier request carrying it was still open on the wire
   * (neither answered nor aborted by the client): a concurrent duplicate send.
   */
  concurrentDuplicates: number
  /** Most requests open at the same time. */
  peakInFlight: number
  respond: Responder
  waitForMessages(count: number, timeout?: number): Promise<Message[]>
  waitForRequests(count: number, timeout?: number): Promise<Received[]>
  close(): Promise<void>
}

/** A real node:http server on a random loopback port that answers as `respond` says. */
export async function startServer(respond: Responder = () => ({})): Promise<TestServer> {
  const requests: Received[] = []
  const open = new Map<string, number>()
  let inFlight = 0
  let server: Server
  const state: TestServer = {
    url: '',
    requests,
    messages: () => requests.flatMap((request) => request.body.batch ?? []),
    concurrentDuplicates: 0,
    peakInFlight: 0,
    respond,
    waitForMessages: async (count, timeout = 5000) => {
      await until(
        () => state.messages().length >= count,
        timeout,
        () => `${count} messages (got ${state.messages().length})`,
      )
      return state.messages()
    },
    waitForRequests: async (count, timeout = 5000) => {
      await until(
        () => requests.length >= count,
        timeout,
        () => `${count} requests (got ${requests.length})`,
      )
      return requests
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks)
    const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8')
    const received: Received = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      raw,
      body: text ? JSON.parse(text) : { batch: [] },
      at: Date.now(),
    }
    const ids = (received.body.batch ?? []).map((message) => message.messageId)
    for (const id of ids) {
      if ((open.get(id) ?? 0) > 0) state.concurrentDuplicates++
      open.set(id, (open.get(id) ?? 0) + 1)
    }
    state.peakInFlight = Math.max(state.peakInFlight, ++inFlight)
    let released = false
    const release = () => {
      if (released) return
      released = true
      inFlight--
      for (const id of ids) open.set(id, (open.get(id) ?? 1) - 1)
    }
    // 'close' fires when the answer is written or when the client aborts the request.
    res.on('close', release)
    const index = requests.length
    requests.push(received)
    const reply = await state.respond(received, index)
    if (reply.delay) await new Promise((resolve) => setTimeout(resolve, reply.delay))
    if (reply.destroy) {
      req.socket.destroy()
      return
    }
    if (res.destroyed) return
    const body = reply.body === undefined ? { success: true } : reply.body
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers })
    res.end(typeof body === 'string' ? body : JSON.stringify(body))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return state
}

/** Polls `condition` every 5 ms; rejects naming `what` after `timeout` ms. */
export async function until(condition: () => boolean, timeout: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeout
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeout} ms waiting for ${what()}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
