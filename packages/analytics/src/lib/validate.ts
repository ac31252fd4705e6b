import { isoNow } from './clock.ts'
import { ValidationError } from './errors.ts'

// Each helper checks one field of a call and returns the value to send, so a builder reads as a
// list of fields. Messages name the call and the field: "track() needs .event …".

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string'
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The call's argument must be an object. */
export function expectParams(value: unknown, call: string): asserts value is Record<string, unknown> {
  if (!isPlainObject(value)) {
    throw new ValidationError('.', `${call}() needs an object argument; got ${describe(value)}.`)
  }
}

/** `userId` or `anonymousId` (or both), each a non-empty string when given. */
export function expectIdentity(userId: unknown, anonymousId: unknown, call: string): void {
  if (userId === undefined && anonymousId === undefined) {
    throw new ValidationError('.userId', `${call}() needs .userId or .anonymousId; neither was given.`)
  }
  optionalString(userId, '.userId', call)
  optionalString(anonymousId, '.anonymousId', call)
}

/** A required non-empty string. */
export function requiredString(value: unknown, field: string, call: string, what: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new ValidationError(
      field,
      `${call}() needs ${field}, ${what}, as a non-empty string; got ${describe(value)}.`,
    )
  }
  return value
}

/** An optional string; when given it must be a non-empty string. */
export function optionalString(value: unknown, field: string, call: string): string | undefined {
  if (value !== undefined && (typeof value !== 'string' || value === '')) {
    throw new ValidationError(
      field,
      `${call}() ${field} must be a non-empty string when given; got ${describe(value)}.`,
    )
  }
  return value
}

/** An optional plain object (`traits`, `properties`, `integrations`). */
export function optionalObject(
  value: unknown,
  field: string,
  call: string,
): Record<string, unknown> | undefined {
  if (value !== undefined && !isPlainObject(value)) throw notAnObject(value, field, call)
  return value
}

/** The error for a member that should be an object and is not. */
export function notAnObject(value: unknown, field: string, call: string): ValidationError {
  return new ValidationError(
    field,
    `${call}() ${field} must be an object when given; got ${describe(value)}.`,
  )
}

/** The message's `timestamp` as ISO 8601 UTC: the given Date or date string, else now. */
export function timestampOf(value: unknown, call: string): string {
  if (value === undefined) return isoNow()
  const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : undefined
  if (date === undefined || Number.isNaN(date.getTime())) {
    throw new ValidationError(
      '.timestamp',
      `${call}() .timestamp must be a valid Date or ISO 8601 string; got ${describe(value)}.`,
    )
  }
  return date.toISOString()
}
