import type { FetchInit, FetchLike, FetchResponse } from './fetch.ts'
import { utf8Length } from './utf8.ts'

// The slices of node:http(s) this module uses, typed here because the library is compiled without
// Node's types (so nothing Node-only slips into code every runtime runs).
interface IncomingMessageLike {
  statusCode?: number
  headers: Record<string, string | string[] | undefined>
  complete: boolean
  setEncoding(encoding: 'utf8'): void
  on(event: 'data', listener: (chunk: string) => void): unknown
  on(event: 'end' | 'close', listener: () => void): unknown
  on(event: 'error', listener: (error: Error) => void): unknown
}

interface ClientRequestLike {
  on(event: 'error', listener: (error: Error) => void): unknown
  end(body: string | Uint8Array): void
}

interface RequestOptions {
  method: string
  headers: Record<string, string | number>
  agent: unknown
  signal: AbortSignal
}

interface HttpModule {
  Agent: new (options: { keepAlive: boolean }) => { destroy(): void }
  request(
    url: string,
    options: RequestOptions,
    callback: (response: IncomingMessageLike) => void,
  ): ClientRequestLike
}

/** A FetchLike plus a way to drop its idle keep-alive connections. */
export interface NodeHttpFetch {
  fetch: FetchLike
  close(): void
}

type GetBuiltinModule = (id: string) => unknown

/**
 * A `fetch` over node:http/node:https with a keep-alive agent, on runtimes that expose
 * `process.getBuiltinModule` (Node ≥ 20.16, Bun, Deno); undefined elsewhere, where the global
 * fetch is used. In Node it costs a fraction of the CPU of the global fetch per request, because
 * undici's fetch builds web streams and Request/Response objects for every call.
 */
export function nodeHttpFetch(): NodeHttpFetch | undefined {
  const scope = globalThis as { process?: { getBuiltinModule?: GetBuiltinModule } }
  const getBuiltinModule = scope.process?.getBuiltinModule
  if (typeof getBuiltinModule !== 'function') return undefined
  let http: HttpModule | undefined
  let https: HttpModule | undefined
  try {
    http = getBuiltinModule('node:http') as HttpModule | undefined
    https = getBuiltinModule('node:https') as HttpModule | undefined
  } catch {
    return undefined
  }
  if (typeof http?.request !== 'function' || typeof https?.request !== 'function') return undefined
  const agents = {
    'http:': new http.Agent({ keepAlive: true }),
    'https:': new https.Agent({ keepAlive: true }),
  }
  const modules = { 'http:': http, 'https:': https }

  const fetch: FetchLike = (url: string, init: FetchInit) =>
    new Promise<FetchResponse>((resolve, reject) => {
      const protocol = url.startsWith('https:') ? 'https:' : 'http:'
      const length = typeof init.body === 'string' ? utf8Length(init.body) : init.body.byteLength
      const options: RequestOptions = {
        method: init.method,
        headers: { ...init.headers, 'content-length': length },
        agent: agents[protocol],
        signal: init.signal,
      }
      const request = modules[protocol].request(url, options, (response) => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk) => {
          text += chunk
        })
        response.on('error', reject)
        response.on('close', () => {
          if (!response.complete) reject(new Error('The connection closed before the response was complete'))
        })
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: { get: (name) => headerValue(response.headers[name.toLowerCase()]) },
            text: () => Promise.resolve(text),
          }),
        )
      })
      request.on('error', reject)
      request.end(init.body)
    })

  return {
    fetch,
    close() {
      agents['http:'].destroy()
      agents['https:'].destroy()
    },
  }
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null
  return Array.isArray(value) ? value.join(', ') : value
}
