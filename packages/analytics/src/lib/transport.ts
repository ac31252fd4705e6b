import { basicAuth } from './basic-auth.ts'
import { closedError, DeliveryError, ValidationError } from './errors.ts'
import type { FetchLike } from './fetch.ts'
import { gzip } from './gzip.ts'
import { nodeHttpFetch } from './node-http.ts'
import { isRetryableStatus, parseRetryAfter } from './retry.ts'
import { unref } from './timers.ts'

/** A message the server refused inside an accepted batch: `index` is its position in the batch sent. */
export interface Rejection {
  readonly index: number
  readonly error: string
}

export type AttemptResult =
  | { readonly ok: true; readonly status: number; readonly rejected: readonly Rejection[] }
  | { readonly ok: false; readonly error: DeliveryError; readonly retryAfter: number | undefined }

export interface TransportOptions {
  url: string
  writeKey: string
  timeout: number
  gzip: boolean
  /** The caller's fetch; when undefined, node:http(s) where available, else the global fetch. */
  fetch: FetchLike | undefined
}

const NO_REJECTIONS: readonly Rejection[] = Object.freeze([])
const noop = (): void => {}

/** One HTTP attempt at a batch: POST, timeout, and the answer sorted into delivered / retry / final. */
export class Transport {
  private readonly url: string
  private readonly timeout: number
  private readonly gzip: boolean
  private readonly fetch: FetchLike
  private readonly headers: Record<string, string>
  /** Which HTTP client is in use, for logs: `fetch option`, `node:http` or `fetch`. */
  readonly client: string
  /** Releases the client's idle connections (node:http keep-alive sockets). */
  readonly close: () => void

  constructor(options: TransportOptions) {
    this.url = options.url
    this.timeout = options.timeout
    this.gzip = options.gzip
    const nodeHttp = options.fetch === undefined ? nodeHttpFetch() : undefined
    if (options.fetch !== undefined) {
      this.fetch = options.fetch
      this.client = 'fetch option'
      this.close = noop
    } else if (nodeHttp !== undefined) {
      this.fetch = nodeHttp.fetch
      this.client = 'node:http'
      this.close = nodeHttp.close
    } else if (typeof globalThis.fetch === 'function') {
      // Through a wrapper: browsers throw "Illegal invocation" when fetch's `this` is not the global.
      this.fetch = (url, init) => globalThis.fetch(url, init)
      this.client = 'fetch'
      this.close = noop
    } else {
      throw new ValidationError(
        '.fetch',
        'No HTTP client here (no fetch, no node:http): pass the fetch option.',
      )
    }
    const headers: Record<string, string> = {
      authorization: basicAuth(options.writeKey),
      'content-type': 'application/json',
    }
    if (options.gzip) headers['content-encoding'] = 'gzip'
    this.headers = headers
  }

  /** Sends `body` once. Never rejects. `shutdown` aborts the attempt (close() ran out of time). */
  async send(body: string | Uint8Array<ArrayBuffer>, shutdown: AbortSignal): Promise<AttemptResult> {
    const controller = new AbortController()
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, this.timeout)
    unref(timer)
    const onShutdown = () => controller.abort()
    shutdown.addEventListener('abort', onShutdown)
    try {
      const exchange = this.exchange(body, controller.signal)
      // Swallow its late rejection when the race below is lost to an abort.
      exchange.catch(noop)
      const { status, retryAfter, text } = await untilAborted(exchange, controller.signal)
      return classify(status, retryAfter, text)
    } catch (cause) {
      if (shutdown.aborted) return { ok: false, error: closedError(), retryAfter: undefined }
      if (timedOut) return failure('timeout', `No complete answer within ${this.timeout} ms`, cause)
      const reason =
        cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : ''
      return failure('network', `Request failed${reason ? `: ${reason}` : ''}`, cause)
    } finally {
      clearTimeout(timer)
      shutdown.removeEventListener('abort', onShutdown)
    }
  }

  private async exchange(body: string | Uint8Array<ArrayBuffer>, signal: AbortSignal) {
    const payload = this.gzip ? await gzip(body) : body
    const response = await this.fetch(this.url, {
      method: 'POST',
      headers: this.headers,
      body: payload,
      signal,
    })
    // The body is always read: it carries the rejections, and an unread body holds the connection.
    const text = await response.text()
    return { status: response.status, retryAfter: response.headers.get('retry-after'), text }
  }
}

/** A timeout or network error: no answer, so always worth a retry. */
function failure(kind: 'timeout' | 'network', message: string, cause: unknown) {
  return {
    ok: false,
    error: new DeliveryError(kind, message, { retryable: true, cause }),
    retryAfter: undefined,
  } as const
}

/** `promise`, or a rejection as soon as `signal` aborts, for a custom fetch that ignores its signal. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

function classify(status: number, retryAfter: string | null, text: string): AttemptResult {
  if (status >= 200 && status < 300) return { ok: true, status, rejected: rejectionsOf(text) }
  const retryable = isRetryableStatus(status)
  return {
    ok: false,
    error: new DeliveryError('http', `HTTP ${status}: ${errorMessageOf(text)}`, { status, retryable }),
    retryAfter: retryable ? parseRetryAfter(retryAfter, Date.now()) : undefined,
  }
}

/** `rejected` from a partial-acceptance answer: `{"success": true, "accepted": N, "rejected": [{index, error}]}`. */
function rejectionsOf(text: string): readonly Rejection[] {
  // Most answers are `{"success":true}`: skip parsing them.
  if (!text.includes('"rejected"')) return NO_REJECTIONS
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return NO_REJECTIONS
  }
  const rejected = (parsed as { rejected?: unknown } | null)?.rejected
  if (!Array.isArray(rejected)) return NO_REJECTIONS
  const out: Rejection[] = []
  for (const item of rejected as unknown[]) {
    const { index, error } = (item ?? {}) as { index?: unknown; error?: unknown }
    if (typeof index === 'number' && Number.isInteger(index)) {
      out.push({ index, error: typeof error === 'string' ? error : 'rejected by the server' })
    }
  }
  return out
}

/** The server's error message (Sluice: `{"error": {"message"}}`), else the start of the body. */
function errorMessageOf(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown } | null
    const error = parsed?.error
    if (typeof error === 'string') return error
    if (
      typeof error === 'object' &&
      error !== null &&
      typeof (error as { message?: unknown }).message === 'string'
    ) {
      return (error as { message: string }).message
    }
    if (typeof parsed?.message === 'string') return parsed.message
  } catch {
    // Not JSON: show the text itself.
  }
  const excerpt = text.trim().slice(0, 200)
  return excerpt === '' ? '(empty body)' : excerpt
}
