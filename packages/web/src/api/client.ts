/**
 * How the web app calls the management API: same origin, the session cookie, and the CSRF header on
 * every change. Every error comes back as an ApiError carrying the API's code, message and field.
 * Plain TypeScript without DOM or React, so that the unit tests run it under Node.
 */
import { type ErrorBody, fieldLabel } from '@sluice/server/api'

export class ApiError extends Error {
  readonly status: number
  readonly code: string
  /** JSON pointer of the input the error concerns, e.g. `/settings/webhooks/0/url`. */
  readonly field: string | undefined

  constructor(status: number, code: string, message: string, field?: string) {
    super(message)
    this.status = status
    this.code = code
    this.field = field
  }
}

/**
 * Whether `error` is the API's error about `field` (a JSON pointer) or, unless `exact`, about something
 * inside it: `/definition/all/0` concerns `/definition` too.
 */
export function errorConcerns(error: unknown, field: string, exact = false): boolean {
  if (!(error instanceof ApiError) || error.field === undefined) return false
  return error.field === field || (!exact && error.field.startsWith(`${field}/`))
}

/**
 * The API's message in the form's words: the API names the field by its path
 * (`settings.webhooks[1].url is not an absolute URL`), the form by its label (`URL 2 is not …`).
 */
export function inFormWords(error: ApiError, label: string | undefined): string {
  if (label === undefined || error.field === undefined) return error.message
  const path = fieldLabel(error.field)
  if (path === '') return error.message
  // The path as a whole name: at the start of the message (`subjectIds must …`), or written like a path
  // (`settings.webhooks[1].url`). A plain word inside a sentence ("This access token is …") stays.
  const at = [...error.message.matchAll(new RegExp(escapeRegExp(path), 'g'))].find(
    (match) =>
      !/[\w.[\]]/.test(error.message[match.index - 1] ?? '') &&
      !/\w/.test(error.message[match.index + path.length] ?? '') &&
      (match.index === 0 || /[.[]/.test(path)),
  )
  if (at === undefined) return error.message
  return error.message.slice(0, at.index) + label + error.message.slice(at.index + path.length)
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

export async function send<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (method !== 'GET') headers['x-sluice-csrf'] = '1'
  if (body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(`/api/v1${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  const parsed = text ? JSON.parse(text) : undefined
  if (!response.ok) {
    const error: Partial<ErrorBody['error']> = (parsed as Partial<ErrorBody> | undefined)?.error ?? {}
    throw new ApiError(
      response.status,
      error.code ?? 'http_error',
      error.message ?? `Sluice answered ${response.status}.`,
      error.field,
    )
  }
  return parsed as T
}

export const get = <T>(path: string) => send<T>('GET', path)

/** `?a=1&b=2` from the values given; absent ones are left out. */
export function queryString(query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value))
  const text = params.toString()
  return text ? `?${text}` : ''
}
