/**
 * What the product's rules refuse, independent of how the request arrived (HTTP API, CLI, web app).
 * Each carries a message that says what was wrong and how to fix it; the HTTP layer maps the classes
 * to status codes (400, 401, 404, 409) and the CLI prints the message.
 */

/** A value broke a rule. `field` is a JSON pointer such as `/name` or `/settings/webhooks/0/url`. */
export class ValidationError extends Error {
  readonly code = 'validation_failed'
  readonly field: string

  constructor(field: string, message: string) {
    super(message)
    this.name = 'ValidationError'
    this.field = field
  }
}

/** A refusal with a stable, machine-readable `code` (e.g. `source_not_found`) beside its message. */
abstract class CodedError extends Error {
  readonly code: string

  constructor(code: string, message: string) {
    super(message)
    this.name = new.target.name
    this.code = code
  }
}

/** The caller could not be identified as allowed to do this (no key, an unknown key, a disabled source). */
export class UnauthenticatedError extends CodedError {}

/** The resource the request names does not exist. */
export class NotFoundError extends CodedError {}

/** The request is valid but conflicts with the resource's current state (e.g. replaying a pending delivery). */
export class ConflictError extends CodedError {}
