/**
 * One webhook attempt: POST the already-serialized body to one URL and describe what happened
 * (SPEC §4). Never throws for anything the endpoint does; every outcome is an `AttemptResult` with
 * its retry verdict from the retry policy.
 *
 * - Headers: the URL's static headers, then `User-Agent`, `Content-Type: application/json` and
 *   `X-Signature` (when signed), which static headers can never replace.
 * - Redirects are never followed: a 3xx is a final failure that names where it pointed.
 * - TLS certificates are verified. A self-signed (or otherwise unverifiable) certificate fails the
 *   handshake, so no request byte is sent; the error says so.
 * - SSRF: every connection goes through the guard in ssrf.ts (IP-literal hosts here, host names in
 *   the pinned lookup), unless `allowPrivate`.
 * - Time: one deadline of `timeoutMs` (5 s) for connecting, sending and receiving the response
 *   headers. Then at most `excerptWaitMs` more for the first 1 KB of the body; the rest is discarded
 *   (the connection is closed rather than drained), so a huge or trickling body costs nothing.
 *
 * Isolation: undici's Agent keeps one pool per origin (scheme://host:port) with keep-alive and at most
 * `connectionsPerOrigin` sockets. A hanging endpoint can therefore hold only its own pool's sockets,
 * and only until the deadline aborts them (an aborted request destroys its socket). Pools never share
 * sockets or queues across origins. Requests beyond `connectionsPerOrigin` to one origin wait in that
 * origin's queue, inside their own deadline, so the delivery engine should keep per-endpoint
 * concurrency at or below `connectionsPerOrigin`.
 */
import { STATUS_CODES } from 'node:http'
import type { Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { Agent, buildConnector } from 'undici'
import {
  type AttemptVerdict,
  classifyAttempt,
  DEFAULT_RETRY_SETTINGS,
  type ErrorKind,
  parseRetryAfter,
} from './retry-policy.ts'
import { createGuardedLookup, type Resolver, refusalForHost, SsrfRefusedError } from './ssrf.ts'
import { RESERVED_HEADER_NAMES } from './webhook-settings.ts'

export const USER_AGENT = 'Sluice/1.0'
/** The most of a response body kept with an attempt. */
export const RESPONSE_EXCERPT_BYTES = 1024

export interface WebhookSenderOptions {
  /** Allow loopback/private/link-local/metadata destinations (SLUICE_ALLOW_PRIVATE_DESTINATIONS). Default false. */
  allowPrivate?: boolean
  /** Deadline for connect + send + response headers. Default 5000 ms (SPEC §4). */
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
  /** The `X-Signature` value, when the destination has a shared secret. */
  signature?: string | undefined
}

export interface AttemptResult {
  url: string
  /** Epoch ms when the attempt started. */
  attemptedAt: number
  /** Present when the endpoint answered. */
  statusCode?: number
  /** Present when the attempt did not get a 2xx. */
  errorKind?: ErrorKind
  errorText?: string
  /** From the start to the response headers (or to the failure). */
  latencyMs: number
  /** Up to 1 KB of the response body, decoded as UTF-8. */
  responseExcerpt: string
  outcome: AttemptVerdict
  retryable: boolean
  /** The endpoint's `Retry-After`, in ms from now, uncapped (the retry policy caps it). */
  retryAfterMs?: number
}

/** Static headers with these names (any case) are dropped. Settings validation already refuses them. */
const RESERVED = new Set([...RESERVED_HEADER_NAMES, 'expect'].map((name) => name.toLowerCase()))

export class WebhookSender {
  readonly timeoutMs: number
  readonly excerptWaitMs: number
  readonly userAgent: string
  readonly connectionsPerOrigin: number
  readonly #agent: Agent

  constructor(options: WebhookSenderOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_RETRY_SETTINGS.requestTimeoutMs
    this.excerptWaitMs = options.excerptWaitMs ?? 250
    this.userAgent = options.userAgent ?? USER_AGENT
    this.connectionsPerOrigin = options.connectionsPerOrigin ?? 16
    const allowPrivate = options.allowPrivate ?? false

    const dial = buildConnector({
      // Host names: resolved once, every address checked, the checked addresses dialled (pinned).
      lookup: createGuardedLookup({ allowPrivate, ...(options.resolve ? { resolve: options.resolve } : {}) }),
      timeout: this.timeoutMs,
      allowH2: false,
      ...(options.trustedCa ? { ca: options.trustedCa } : {}),
    })
    const connect: buildConnector.connector = (connectOptions, callback) => {
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
      connectTimeout: this.timeoutMs,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    })
  }

  /** Makes one attempt. Resolves (never rejects) with what happened. */
  async send(request: SendRequest): Promise<AttemptResult> {
    const attemptedAt = Date.now()
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)

    const url = parseHttpUrl(request.url)
    if (typeof url === 'string') {
      return failure(request.url, attemptedAt, 0, 'invalid_url', url)
    }

    const controller = new AbortController()
    let timedOut = false
    const deadline = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, this.timeoutMs)

    try {
      const response = await this.#agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: this.#headers(request),
        body: request.body,
        signal: controller.signal,
      })
      clearTimeout(deadline)
      const latencyMs = elapsed()
      const responseExcerpt = await readExcerpt(response.body, RESPONSE_EXCERPT_BYTES, this.excerptWaitMs)
      return fromResponse(
        request.url,
        attemptedAt,
        latencyMs,
        response.statusCode,
        response.headers,
        responseExcerpt,
      )
    } catch (error) {
      const latencyMs = elapsed()
      if (timedOut) {
        return failure(
          request.url,
          attemptedAt,
          latencyMs,
          'timeout',
          `No response within ${this.timeoutMs} ms.`,
        )
      }
      const { kind, text } = describeError(error, url, this.timeoutMs)
      return failure(request.url, attemptedAt, latencyMs, kind, text)
    } finally {
      clearTimeout(deadline)
    }
  }

  /** Closes idle keep-alive sockets and waits for requests in flight. */
  async close(): Promise<void> {
    await this.#agent.close()
  }

  #headers(request: SendRequest): Record<string, string> {
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.headers ?? {})) {
      if (!RESERVED.has(name.toLowerCase())) headers[name] = value
    }
    headers['user-agent'] = this.userAgent
    headers['content-type'] = 'application/json'
    if (request.signature !== undefined) headers['x-signature'] = request.signature
    return headers
  }
}

/** The URL, or why it cannot be sent to. */
function parseHttpUrl(text: string): URL | string {
  if (!URL.canParse(text)) return `Not an absolute URL: ${JSON.stringify(text)}.`
  const url = new URL(text)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `Only http:// and https:// URLs can receive webhooks, not ${url.protocol}//.`
  }
  return url
}

function fromResponse(
  url: string,
  attemptedAt: number,
  latencyMs: number,
  statusCode: number,
  headers: Record<string, string | string[] | undefined>,
  responseExcerpt: string,
): AttemptResult {
  const outcome = classifyAttempt({ statusCode })
  const result: AttemptResult = {
    url,
    attemptedAt,
    statusCode,
    latencyMs,
    responseExcerpt,
    outcome,
    retryable: outcome === 'retryable',
  }
  if (outcome === 'success') return result

  const reason = `HTTP ${statusCode}${STATUS_CODES[statusCode] ? ` ${STATUS_CODES[statusCode]}` : ''}`
  if (statusCode >= 300 && statusCode <= 399) {
    // The Location is the endpoint's text: shortened so it cannot bloat the attempt record.
    const location = firstHeader(headers.location)?.slice(0, 500)
    result.errorKind = 'redirect'
    result.errorText =
      `${reason}${location ? ` to ${location}` : ''}: Sluice never follows redirects. ` +
      'Configure the final URL instead.'
  } else {
    result.errorKind = 'http'
    result.errorText = reason
  }
  if (outcome === 'retryable') {
    const retryAfterMs = parseRetryAfter(firstHeader(headers['retry-after']), Date.now())
    if (retryAfterMs !== undefined) result.retryAfterMs = retryAfterMs
  }
  return result
}

function failure(
  url: string,
  attemptedAt: number,
  latencyMs: number,
  errorKind: ErrorKind,
  errorText: string,
): AttemptResult {
  const outcome = classifyAttempt({ errorKind })
  return {
    url,
    attemptedAt,
    errorKind,
    errorText,
    latencyMs,
    responseExcerpt: '',
    outcome,
    retryable: outcome === 'retryable',
  }
}

/** Node's codes for a certificate that does not verify, with the words a user understands. */
const CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'INVALID_CA',
  'ERR_TLS_CERT_ALTNAME_INVALID',
])
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_SOCKET', // "other side closed"
  'UND_ERR_CLOSED',
])
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
])
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'ENODATA'])

function describeError(error: unknown, url: URL, timeoutMs: number): { kind: ErrorKind; text: string } {
  if (error instanceof SsrfRefusedError) return { kind: 'ssrf', text: error.message }
  const code = errorCode(error)
  // Node appends advice meant for Node users ("try running Node.js with --use-system-ca"): keep the first clause.
  const message = error instanceof Error ? (error.message.split(';')[0] ?? '') : String(error)
  if (
    CERTIFICATE_CODES.has(code) ||
    code.startsWith('ERR_SSL_') ||
    code.startsWith('ERR_TLS_') ||
    code === 'EPROTO'
  ) {
    return {
      kind: 'tls',
      text:
        `TLS handshake with ${url.host} failed: ${message} (${code}); Sluice refuses to send to HTTPS ` +
        'endpoints whose certificate does not verify, so no request was sent. Use a certificate from a public CA.',
    }
  }
  if (TIMEOUT_CODES.has(code))
    return { kind: 'timeout', text: `No response within ${timeoutMs} ms (${message}).` }
  if (DNS_CODES.has(code)) return { kind: 'dns', text: `Could not resolve ${url.hostname} (${code}).` }
  if (CONNECTION_CODES.has(code))
    return { kind: 'connect', text: `Connection to ${url.host} failed: ${message} (${code}).` }
  const name = error instanceof Error ? error.name : ''
  if (
    name === 'HTTPParserError' ||
    code.startsWith('HPE_') ||
    code.startsWith('UND_ERR_RESPONSE') ||
    code === 'UND_ERR_INFO'
  ) {
    return { kind: 'protocol', text: `${url.host} did not answer with valid HTTP/1.1: ${message} (${code}).` }
  }
  if (code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_NOT_SUPPORTED') {
    return { kind: 'invalid_request', text: `Sluice could not build the request: ${message}` }
  }
  return { kind: 'unknown', text: code ? `${message} (${code})` : message }
}

/** The error's code, looking through `AggregateError` (one per address tried) and `cause`. */
function errorCode(error: unknown): string {
  let current: unknown = error
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const { code, errors, cause } = current as { code?: unknown; errors?: unknown; cause?: unknown }
    if (typeof code === 'string') return code
    current = Array.isArray(errors) && errors.length > 0 ? errors[0] : cause
  }
  return ''
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

/**
 * Reads at most `limit` bytes within `waitMs`, then destroys the body: undici closes that socket
 * instead of draining an unknown amount. A body that ended in time leaves the socket for reuse.
 */
async function readExcerpt(body: Readable, limit: number, waitMs: number): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  const stop = setTimeout(() => body.destroy(), waitMs)
  try {
    for await (const chunk of body) {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array)
      chunks.push(bytes)
      size += bytes.length
      if (size >= limit) break
    }
  } catch {
    // Destroyed by the wait limit, or the connection dropped mid-body: keep what arrived.
  } finally {
    clearTimeout(stop)
    if (!body.readableEnded) body.destroy()
  }
  // StringDecoder.write holds back a multi-byte character cut at the limit instead of mangling it.
  let text = new StringDecoder('utf8').write(Buffer.concat(chunks).subarray(0, limit))
  // Invalid bytes decode to U+FFFD (3 bytes each); trim so the stored excerpt stays within the limit.
  while (Buffer.byteLength(text) > limit) text = text.slice(0, -1)
  return text
}
