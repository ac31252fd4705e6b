/**
 * Errors that reach an HTTP client. Every one carries a message that says what was wrong and how to
 * fix it; the server's error handler renders them as `{"error": {"code", "message", "field"?}}`.
 */
export class HttpError extends Error {
  readonly statusCode: number
  readonly code: string
  readonly field: string | undefined

  constructor(statusCode: number, code: string, message: string, field?: string) {
    super(message)
    this.name = 'HttpError'
    this.statusCode = statusCode
    this.code = code
    this.field = field
  }
}

/** A value failed a validation rule. `field` is a JSON pointer-ish path such as `.event` or `/settings/webhooks/0/url`. */
export class ValidationError extends HttpError {
  constructor(field: string, message: string) {
    super(400, 'validation_failed', message, field)
    this.name = 'ValidationError'
  }
}

export function errorBody(code: string, message: string, field?: string) {
  return { error: field === undefined ? { code, message } : { code, message, field } }
}
