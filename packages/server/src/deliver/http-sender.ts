/**
 * The transport: one webhook request POSTs the already-serialized body to one URL and reports what
 * happened (docs/webhooks.md). Never throws for anything the endpoint does; every request resolves
 * to an `AttemptResult` (status, error kind and words from error-kinds.ts, latency, excerpt,
 * Retry-After). What a result means for the delivery is the retry policy's call, not this file's.
 *
 * - Headers: the URL's static headers, then `User-Agent`, `Content-Type: application/json` and the
 *   signature headers (when signed), which static headers can never replace.
 * - Redirects are never followed: a 3xx is reported as a `redirect` error naming where it pointed.
 * - TLS certificates are verified. A self-signed (or otherwise unverifiable) certificate fails the
 *   handshake, so no request byte is sent; the error says so.
 * - SSRF: every connection goes through the guard in ssrf.ts (IP-literal hosts here, host names in
 *   the pinned lookup), unless `allowPrivate`.
 * - Time: one deadline of `timeoutMs` (5 s) for connecting, sending and receiving the response
 *   headers, counted from `send`; past it the request is a timeout, whatever undici is doing. Then at
 *   most `excerptWaitMs` more for the first 1 KB of the body; the rest is discarded (the connection
 *   is closed rather than drained), so a huge or trickling body costs nothing.
 *
 * Cost: this runs thousands of times a second, so each request is one undici dispatch handler
 * (`PostHandler`): no response stream, async iterator, AbortController or timer of its own. Deadlines
 * are two shared FIFO lists with one timer each (deadlines.ts); URLs and header lists are parsed and
 * built once per URL and settings object, not per request.
 *
 * Isolation: undici's Agent keeps one pool per origin (scheme://host:port) with keep-alive and at most
 * `connectionsPerOrigin` sockets. A hanging endpoint can therefore hold only its own pool's sockets,
 * and only until the deadline aborts them (an aborted request destroys its socket). Pools never share
 * sockets or queues across origins. Requests beyond `connectionsPerOrigin` to one origin wait in that
 * origin's queue, inside their own deadline (one that runs out there is reported as a timeout at
 * once, and never sent), so the delivery engine should keep per-endpoint concurrency at or below
 * `connectionsPerOrigin`.
 */

import type { IncomingHttpHeaders } from 'node:http'
import { createRequire } from 'node:module'
import { StringDecoder } from 'node:string_decoder'
import type { Dispatcher, Agent as UndiciAgent, buildConnector as undiciBuildConnector } from 'undici'
import { REPLAY_HEADER } from '../domain/replays.ts'
import { RESERVED_HEADER_NAMES } from '../domain/webhook-settings.ts'
import { type DeadlineEntry, DeadlineList } from './deadlines.ts'
import {
  type AttemptError,
  describeRequestError,
  describeStatus,
  describeTimeout,
  type ErrorKind,
} from './error-kinds.ts'
import { DEFAULT_RETRY_SETTINGS, parseRetryAfter } from './retry-policy.ts'
import { createGuardedLookup, type Resolver, refusalForHost } from './ssrf.ts'

// The two parts of undici a sender uses, not the package's index: that loads all of undici (fetch,
// WebSocket, caches, mocks, proxies; ~2.5 MB more heap for good in every Sluice process). Undici is
// pinned, and these files have held these classes since its dispatcher layout (version 6).
const require = createRequire(import.meta.url)
const Agent: typeof UndiciAgent = require('undici/lib/dispatcher/agent.js')
const buildConnector: typeof undiciBuildConnector = require('undici/lib/core/connect.js')
type Agent = UndiciAgent

export const USER_AGENT = 'Sluice/1.0'
/** The most of a response body kept with a result. */
export const RESPONSE_EXCERPT_BYTES = 1024

export interface WebhookSenderOptions {
  /** Allow loopback/private/link-local/metadata destinations (SLUICE_ALLOW_PRIVATE_DESTINATIONS). Default false. */
  allowPrivate?: boolean
  /** Deadline for connect + send + response headers. Default 5000 ms (the retry policy's request timeout). */
  timeoutMs?: number
  /** After the headers, how long to wait for the response excerpt. Default 250 ms. */
  excerptWaitMs?: number
  /** Default `Sluice/1.0`. */
  userAgent?: string
  /** Most sockets open to one origin at once. Default 16. */
  connectionsPerOrigin?: number
  /** Host name resolution (tests give a fixed table). Default: the system resolver. */
  resolve?: Resolver
  /** Extra CA certificates to trust instead of the system roots (a private PKI). Verification stays on. */
  trustedCa?: string | Buffer | Array<string | Buffer>
}

export interface SendRequest {
  url: string
  /** The URL's static headers from the destination settings. */
  headers?: Record<string, string>
  /** The serialized message: the exact bytes that were signed. */
  body: Buffer
  /** The signature headers (`X-Signature`, Standard Webhooks…) as a flat name/value list; none when unsigned. */
  signatureHeaders?: readonly string[]
  /** Default `POST`. */
  method?: 'POST' | 'PUT' | 'PATCH'
  /** The replay this request is part of (`X-Sluice-Replay`); absent for live deliveries. */
  replayId?: string | undefined
}

export interface AttemptResult {
  url: string
  /** Epoch ms when the request started. */
  attemptedAt: number
  /** Present when the endpoint answered. */
  statusCode?: number
  /** Present when the request did not get a 2xx. */
  errorKind?: ErrorKind
  errorText?: string
  /** From the start to the response headers (or to the failure). */
  latencyMs: number
  /** Up to 1 KB of the response body, decoded as UTF-8. */
  responseExcerpt: string
  /** The endpoint's `Retry-After`, in ms from the response, uncapped (the retry policy caps it). */
  retryAfterMs?: number
}

/** Static headers with these names (any case) are dropped. Settings validation already refuses them. */
const RESERVED = new Set(RESERVED_HEADER_NAMES.map((name) => name.toLowerCase()))

export class WebhookSender {
  readonly timeoutMs: number
  readonly excerptWaitMs: number
  readonly userAgent: string
  readonly connectionsPerOrigin: number
  readonly #agent: Agent
  readonly #deadlines: SenderDeadlines
  /** Parsed URLs (or why one cannot be sent to): a destination's few URLs are sent to again and again. */
  readonly #targets = new Map<string, Target | string>()
  /**
   * The header list for each static-header object. Settings objects are replaced, never changed, when
   * destinations are reloaded, so the object identifies its list. Lists are shared: never mutated.
   */
  readonly #headerLists = new WeakMap<Record<string, string>, string[]>()
  readonly #defaultHeaders: string[]

  constructor(options: WebhookSenderOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_RETRY_SETTINGS.requestTimeoutMs
    this.excerptWaitMs = options.excerptWaitMs ?? 250
    this.userAgent = options.userAgent ?? USER_AGENT
    this.connectionsPerOrigin = options.connectionsPerOrigin ?? 16
    const allowPrivate = options.allowPrivate ?? false
    this.#deadlines = {
      timeoutMs: this.timeoutMs,
      awaitingHeaders: new DeadlineList(this.timeoutMs, (handler) => handler.timeOut()),
      readingExcerpt: new DeadlineList(this.excerptWaitMs, (handler) => handler.endExcerpt()),
    }
    this.#defaultHeaders = this.#headerList(undefined)

    const dial = buildConnector({
      // Host names: resolved once, every address checked, the checked addresses dialled (pinned).
      lookup: createGuardedLookup({ allowPrivate, ...(options.resolve ? { resolve: options.resolve } : {}) }),
      timeout: this.timeoutMs,
      allowH2: false,
      ...(options.trustedCa ? { ca: options.trustedCa } : {}),
    })
    const connect: undiciBuildConnector.connector = (connectOptions, callback) => {
      // IP-literal hosts never reach a lookup, so they are checked here.
      const refusal = allowPrivate ? undefined : refusalForHost(connectOptions.hostname)
      if (refusal) {
        process.nextTick(callback, refusal, null)
        return
      }
      dial(connectOptions, callback)
    }
    this.#agent = new Agent({
      connect,
      connections: this.connectionsPerOrigin,
      pipelining: 1,
      allowH2: false,
      // Backstops only: the request's own deadline (one shared timer) ends it first.
      connectTimeout: this.timeoutMs,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    })
  }

  /** Makes one request. Resolves (never rejects) with what happened. */
  send(request: SendRequest): Promise<AttemptResult> {
    const attemptedAt = Date.now()
    const started = performance.now()
    const target = this.#target(request.url)
    if (typeof target === 'string') {
      return Promise.resolve(failure(request.url, attemptedAt, 0, { kind: 'invalid_url', text: target }))
    }
    const headers = this.#headers(request)
    return new Promise<AttemptResult>((resolve) => {
      const handler = new PostHandler(request.url, target, attemptedAt, started, this.#deadlines, resolve)
      this.#deadlines.awaitingHeaders.add(handler, started)
      // Never throws: undici reports invalid options to the handler's onResponseError.
      this.#agent.dispatch(
        {
          origin: target.origin,
          path: target.path,
          method: request.method ?? 'POST',
          headers,
          body: request.body,
        },
        handler,
      )
    })
  }

  /** Closes idle keep-alive sockets and waits for requests in flight. */
  async close(): Promise<void> {
    await this.#agent.close()
    this.#deadlines.awaitingHeaders.clear()
    this.#deadlines.readingExcerpt.clear()
  }

  #target(url: string): Target | string {
    let target = this.#targets.get(url)
    if (target === undefined) {
      // Bounded: URLs come from destination settings, so this only fills up if they keep changing.
      if (this.#targets.size >= 1_000) this.#targets.clear()
      target = parseHttpUrl(url)
      this.#targets.set(url, target)
    }
    return target
  }

  #headers(request: SendRequest): string[] {
    let list = this.#defaultHeaders
    if (request.headers !== undefined) {
      const cached = this.#headerLists.get(request.headers)
      if (cached) list = cached
      else {
        list = this.#headerList(request.headers)
        this.#headerLists.set(request.headers, list)
      }
    }
    const signatures = request.signatureHeaders
    if (signatures !== undefined && signatures.length > 0) list = list.concat(signatures)
    return request.replayId === undefined ? list : list.concat(REPLAY_HEADER, request.replayId)
  }

  /** Static headers first, then Sluice's own, as the flat name/value list undici takes. */
  #headerList(headers: Record<string, string> | undefined): string[] {
    const list: string[] = []
    for (const [name, value] of Object.entries(headers ?? {})) {
      if (!RESERVED.has(name.toLowerCase())) list.push(name, value)
    }
    list.push('user-agent', this.userAgent, 'content-type', 'application/json')
    return list
  }
}

/** What a request needs from its URL. */
interface Target {
  origin: string
  /** Path and query. */
  path: string
  /** For error messages. */
  host: string
  hostname: string
}

/** A sender's two deadlines, shared by its requests. */
interface SenderDeadlines {
  timeoutMs: number
  /** Requests waiting for response headers, oldest first: the request deadline. */
  awaitingHeaders: DeadlineList<PostHandler>
  /** Requests reading their response excerpt, oldest first: the excerpt wait. */
  readingExcerpt: DeadlineList<PostHandler>
}

/** Passed to `abort`, which closes the socket; the request has already settled, so nobody reads it. */
const CLOSING = new Error('Sluice closed the connection: the request is over.')

/**
 * One request as an undici dispatch handler. The response is consumed in the handler's callbacks:
 * no response stream, async iterator or AbortController per request. The excerpt is the first
 * `RESPONSE_EXCERPT_BYTES` of the body, collected as it arrives. A body that ends in time leaves the
 * socket for reuse; at the limit, or when the excerpt wait runs out, the socket is closed rather
 * than drained, so a huge or trickling body costs nothing.
 */
class PostHandler implements Dispatcher.DispatchHandler, DeadlineEntry {
  deadline = 0
  newer: DeadlineEntry | null = null
  older: DeadlineEntry | null = null
  listedIn: object | null = null

  readonly #url: string
  readonly #target: Target
  readonly #attemptedAt: number
  readonly #started: number
  readonly #deadlines: SenderDeadlines
  readonly #resolve: (result: AttemptResult) => void
  #controller: Dispatcher.DispatchController | null = null
  #settled = false
  #timedOut = false
  /** 0 until the response headers arrive. */
  #statusCode = 0
  #headers: IncomingHttpHeaders = {}
  #latencyMs = 0
  #chunks: Buffer[] = []
  #size = 0

  constructor(
    url: string,
    target: Target,
    attemptedAt: number,
    started: number,
    deadlines: SenderDeadlines,
    resolve: (result: AttemptResult) => void,
  ) {
    this.#url = url
    this.#target = target
    this.#attemptedAt = attemptedAt
    this.#started = started
    this.#deadlines = deadlines
    this.#resolve = resolve
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // Timed out while it waited for a connection: it must not be sent late.
    if (this.#settled) controller.abort(CLOSING)
    else this.#controller = controller
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    if (this.#settled || statusCode < 200) return // 1xx: informational, the real answer follows
    const now = performance.now()
    this.#latencyMs = Math.round(now - this.#started)
    this.#statusCode = statusCode
    this.#headers = headers
    this.#deadlines.awaitingHeaders.remove(this)
    this.#deadlines.readingExcerpt.add(this, now)
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return
    this.#chunks.push(chunk)
    this.#size += chunk.length
    if (this.#size >= RESPONSE_EXCERPT_BYTES) {
      this.#settleWithResponse()
      controller.abort(CLOSING)
    }
  }

  onResponseEnd(): void {
    if (!this.#settled) this.#settleWithResponse()
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    if (this.#settled) return
    // The connection dropped mid-body: the answer stands, with what arrived of the excerpt.
    if (this.#statusCode !== 0) {
      this.#settleWithResponse()
      return
    }
    const latencyMs = Math.round(performance.now() - this.#started)
    const { timeoutMs } = this.#deadlines
    const described = this.#timedOut
      ? describeTimeout(timeoutMs)
      : describeRequestError(error, this.#target, timeoutMs)
    this.#settle(failure(this.#url, this.#attemptedAt, latencyMs, described))
  }

  /** The request deadline passed without response headers. */
  timeOut(): void {
    this.#timedOut = true
    // Started: aborting destroys its socket and reports through onResponseError. Still queued or
    // connecting, nothing reports: settle here; onRequestStart aborts it if it ever gets a connection.
    this.#controller?.abort(CLOSING)
    if (!this.#settled) this.onResponseError(null, CLOSING)
  }

  /** The excerpt wait ran out: keep what arrived and close the socket instead of draining it. */
  endExcerpt(): void {
    if (this.#settled) return
    this.#settleWithResponse()
    this.#controller?.abort(CLOSING)
  }

  #settleWithResponse(): void {
    this.#settle(
      fromResponse(
        this.#url,
        this.#attemptedAt,
        this.#latencyMs,
        this.#statusCode,
        this.#headers,
        decodeExcerpt(this.#chunks, this.#size, RESPONSE_EXCERPT_BYTES),
      ),
    )
  }

  #settle(result: AttemptResult): void {
    this.#settled = true
    this.#deadlines.awaitingHeaders.remove(this)
    this.#deadlines.readingExcerpt.remove(this)
    this.#resolve(result)
  }
}

/** What to dial and request for the URL, or why it cannot be sent to. */
function parseHttpUrl(text: string): Target | string {
  if (!URL.canParse(text)) return `Not an absolute URL: ${JSON.stringify(text)}.`
  const url = new URL(text)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `Only http:// and https:// URLs can receive webhooks, not ${url.protocol}//.`
  }
  return { origin: url.origin, path: `${url.pathname}${url.search}`, host: url.host, hostname: url.hostname }
}

/** The result of an answered request: a non-2xx status carries its error kind and words. */
function fromResponse(
  url: string,
  attemptedAt: number,
  latencyMs: number,
  statusCode: number,
  headers: IncomingHttpHeaders,
  responseExcerpt: string,
): AttemptResult {
  const result: AttemptResult = { url, attemptedAt, statusCode, latencyMs, responseExcerpt }
  const error = describeStatus(statusCode, firstHeader(headers.location))
  if (error === undefined) return result
  result.errorKind = error.kind
  result.errorText = error.text
  const retryAfterMs = parseRetryAfter(firstHeader(headers['retry-after']), Date.now())
  if (retryAfterMs !== undefined) result.retryAfterMs = retryAfterMs
  return result
}

/** The result of a request that got no answer. */
function failure(url: string, attemptedAt: number, latencyMs: number, error: AttemptError): AttemptResult {
  return { url, attemptedAt, errorKind: error.kind, errorText: error.text, latencyMs, responseExcerpt: '' }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

/**
 * The first `limit` bytes of the body as UTF-8 text. A multi-byte character cut at the end is dropped
 * rather than mangled (StringDecoder.write holds it back); text ending in an ASCII byte has no such
 * character, so it is decoded directly.
 */
function decodeExcerpt(chunks: Buffer[], size: number, limit: number): string {
  if (size === 0) return ''
  const whole = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)
  const bytes = size > limit ? whole.subarray(0, limit) : whole
  let text =
    (bytes[bytes.length - 1] as number) < 0x80
      ? bytes.toString('utf8')
      : new StringDecoder('utf8').write(bytes)
  // Invalid bytes decode to U+FFFD (3 bytes each); trim so the stored excerpt stays within the limit.
  // A UTF-16 unit is at most 3 UTF-8 bytes, so short text cannot be over and is not measured.
  if (text.length * 3 > limit) while (Buffer.byteLength(text) > limit) text = text.slice(0, -1)
  return text
}
