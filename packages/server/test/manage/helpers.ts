/** Shared pieces of the management API tests. */
import { fetchText } from '../helpers/http.ts'

export interface RawResponse {
  status: number
  headers: Headers
  /** The body exactly as sent, for searching it for things that must never appear. */
  text: string
  // any: tests read arbitrary JSON members.
  body: any
}

export interface RawRequestOptions {
  /** The whole Authorization header; omitted means no header at all. */
  authorization?: string
  body?: unknown
}

/** One HTTP request with full control over the Authorization header, answering the raw text too. */
export async function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  options: RawRequestOptions = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = {}
  if (options.authorization !== undefined) headers.authorization = options.authorization
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetchText(baseUrl + path, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  })
  const { text } = response
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: text === '' ? undefined : JSON.parse(text),
  }
}

/** A valid destination-create body; `settings` members override the defaults. */
export function destinationBody(
  sourceIds: string[],
  settings: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    name: 'Orders webhook',
    type: 'webhooks',
    sourceIds,
    settings: { webhooks: [{ url: 'https://hooks.example.com/sluice' }], ...settings },
    ...extra,
  }
}

/** Basic auth the way SDKs send a write key: user name = key, empty password. */
export function writeKeyAuth(writeKey: string): string {
  return `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`
}

export function trackCall(): Record<string, unknown> {
  return { userId: 'user-1', event: 'Order Completed', properties: { total: 12.5 } }
}
