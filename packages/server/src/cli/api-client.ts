/**
 * Minimal clients for a running Sluice's APIs, as the CLI uses them: the management API with the admin
 * token, and the Tracking API with a write key. Errors carry the API's own message.
 */
import type { MessageType } from '../domain/messages.ts'

export type ManagementClient = <T>(method: string, path: string, body?: unknown) => Promise<T>

export function managementClient(baseUrl: string, adminToken: string): ManagementClient {
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    if (!response.ok) {
      throw new Error(`${method} /api/v1${path} answered ${response.status}: ${errorMessage(text)}`)
    }
    return (text === '' ? undefined : JSON.parse(text)) as T
  }
}

export async function sendCall(
  baseUrl: string,
  writeKey: string,
  type: MessageType,
  call: object,
): Promise<void> {
  const response = await fetch(`${baseUrl}/v1/${type}`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(call),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`POST /v1/${type} answered ${response.status}: ${errorMessage(text)}`)
}

function errorMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } | string; message?: string }
    const error = parsed.error
    return (typeof error === 'string' ? error : error?.message) ?? parsed.message ?? text
  } catch {
    return text
  }
}
