/**
 * Errors that only exist on HTTP (a body that is not JSON, a missing token, a wrong encoding). Every
 * one carries a message that says what was wrong and how to fix it; the server's error handler renders
 * them, and the domain's errors (`../domain/errors.ts`), as `{"error": {"code", "message", "field"?}}`.
 */
export class HttpError extends Error {
  readonly statusCode: number
  readonly code: string
  readonly field: string | undefined
  /** Sent as `Retry-After` when set: the request may succeed if repeated after this many seconds. */
  retryAfterSeconds: number | undefined

  constructor(statusCode: number, code: string, message: string, field?: string) {
    super(message)
    this.name = 'HttpError'
    this.statusCode = statusCode
    this.code = code
    this.field = field
  }
}

export function errorBody(code: string, message: string, field?: string) {
  return { error: field === undefined ? { code, message } : { code, message, field } }
}
