import { gzipSync } from 'node:zlib'
import { fetchText } from './http.ts'

export interface SendOptions {
  /** Sent as HTTP Basic user name with an empty password. */
  writeKey?: string
  gzip?: boolean
  headers?: Record<string, string>
  /** Send these exact bytes instead of JSON.stringify(body). */
  raw?: Buffer | string
}

export interface TrackingResponse {
  status: number
  text: string
  body: any
  contentType: string | null
}

/** POSTs to a Tracking API path the way an SDK does. */
export async function send(
  baseUrl: string,
  path: string,
  body: unknown,
  options: SendOptions = {},
): Promise<TrackingResponse> {
  let payload: Buffer = Buffer.from(options.raw ?? JSON.stringify(body))
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers }
  if (options.writeKey !== undefined) {
    headers.authorization = `Basic ${Buffer.from(`${options.writeKey}:`).toString('base64')}`
  }
  if (options.gzip) {
    payload = gzipSync(payload)
    headers['content-encoding'] = 'gzip'
  }
  const response = await fetchText(baseUrl + path, { method: 'POST', headers, body: payload })
  const text = response.text
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: response.status, text, body: parsed, contentType: response.headers.get('content-type') }
}

export function trackCall(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'track',
    userId: 'user-1',
    event: 'Order Completed',
    properties: { total: 12.5 },
    ...overrides,
  }
}
