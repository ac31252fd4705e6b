import { MESSAGE_TYPES, type MessageType } from '../domain/messages.ts'
import { nestedDeeperThan } from '../lib/json-depth.ts'
import { MAX_ID_LENGTH, MAX_MESSAGE_BYTES, MAX_MESSAGE_ID_LENGTH } from './limits.ts'

/**
 * Deepest nesting of objects and arrays in a message (the message itself is level 1). Far beyond any
 * real call, and far below what JSON.stringify can serialize before it runs out of stack: a message
 * nested thousands of levels deep would otherwise fail as a 500 instead of being rejected.
 */
export const MAX_NESTING_DEPTH = 100

/** Earliest and latest times accepted: the years 0000 to 9999, as in ISO 8601 without extensions. */
const EARLIEST_TIME_MS = Date.parse('0000-01-01T00:00:00.000Z')
const LATEST_TIME_MS = Date.parse('9999-12-31T23:59:59.999Z')

const ID_FIELDS = ['userId', 'anonymousId'] as const
const OBJECT_FIELDS = ['properties', 'traits', 'context', 'integrations'] as const
const STRING_FIELDS = ['event', 'name', 'category'] as const
const TIME_FIELDS = ['timestamp', 'sentAt'] as const

/**
 * Per-message rules (docs/tracking-api.md). A message that breaks one is rejected alone, with the first rule it
 * broke; the other messages of the request are still accepted. Returns null when the message is valid.
 */
export function validateMessage(item: unknown): string | null {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) {
    return 'Each message must be a JSON object.'
  }
  const message = item as Record<string, unknown>
  const type = message.type
  if (typeof type !== 'string' || !MESSAGE_TYPES.includes(type as MessageType)) {
    return `.type must be one of ${MESSAGE_TYPES.join(', ')}; got ${describe(type)}.`
  }
  if (!isId(message.userId) && !isId(message.anonymousId)) {
    return '.userId or .anonymousId is required: a non-empty string identifying the user.'
  }
  for (const field of ID_FIELDS) {
    const id = message[field]
    if (!isAbsentId(id) && !isId(id)) {
      return `.${field} must be a non-empty string or a number; got ${describe(id)}.`
    }
    if (typeof id === 'string' && id.length > MAX_ID_LENGTH && codePoints(id) > MAX_ID_LENGTH) {
      return `.${field} is ${codePoints(id)} characters; the limit is ${MAX_ID_LENGTH}.`
    }
  }
  switch (type as MessageType) {
    case 'track':
      if (typeof message.event !== 'string' || message.event.trim() === '') {
        return '.event is required for track calls: a non-empty string naming the action, e.g. "Order Completed".'
      }
      break
    case 'group':
      if (!isId(message.groupId)) return '.groupId is required for group calls: a non-empty string.'
      break
    case 'alias':
      if (!isId(message.previousId))
        return '.previousId is required for alias calls: the identity to alias from.'
      if (!isId(message.userId)) return '.userId is required for alias calls: the new identity.'
      break
    default:
      break
  }
  for (const field of OBJECT_FIELDS) {
    const value = message[field]
    if (value !== undefined && value !== null && (typeof value !== 'object' || Array.isArray(value))) {
      return `.${field} must be a JSON object; got ${describe(value)}.`
    }
  }
  for (const field of STRING_FIELDS) {
    const value = message[field]
    if (value !== undefined && value !== null && typeof value !== 'string') {
      return `.${field} must be a string; got ${describe(value)}.`
    }
  }
  if (message.messageId !== undefined && message.messageId !== null) {
    if (typeof message.messageId !== 'string' || message.messageId === '') {
      return `.messageId must be a non-empty string; got ${describe(message.messageId)}.`
    }
    if (message.messageId.length > MAX_MESSAGE_ID_LENGTH) {
      return `.messageId is ${message.messageId.length} characters; the limit is ${MAX_MESSAGE_ID_LENGTH}.`
    }
    // It is a dedupe key on every store: PostgreSQL text cannot hold U+0000, and a lone surrogate has
    // no UTF-8 form, so such an id could not be stored or compared as sent.
    if (message.messageId.includes('\u0000') || !message.messageId.isWellFormed()) {
      return '.messageId must be well-formed text without NUL characters (U+0000) or lone surrogates.'
    }
  }
  for (const field of TIME_FIELDS) {
    const value = message[field]
    if (value !== undefined && value !== null && parseTime(value) === null) {
      return `.${field} must be an ISO 8601 date-time such as "2026-01-31T12:00:00.000Z"; got ${describe(value)}.`
    }
  }
  if (nestedDeeperThan(message, MAX_NESTING_DEPTH)) {
    return `Message is nested more than ${MAX_NESTING_DEPTH} levels deep (objects and arrays inside each other); flatten its properties, traits or context.`
  }
  return null
}

/** The 32 KB rule, on the message as the client sent it (serialized). */
export function messageSizeError(serializedBytes: number): string | null {
  return serializedBytes > MAX_MESSAGE_BYTES
    ? `Message is ${serializedBytes} bytes; the limit is ${MAX_MESSAGE_BYTES} bytes (${MAX_MESSAGE_BYTES / 1024} KB). Send smaller properties or traits.`
    : null
}

/**
 * Parses an ISO 8601 date-time (or epoch milliseconds); null when it is not one. Epoch milliseconds
 * must fall within the years 0000 to 9999 like the ISO form, so that the clock-skew correction
 * (receivedAt - (sentAt - timestamp)) always stays a representable date.
 */
export function parseTime(value: unknown): number | null {
  if (typeof value === 'number') {
    return Number.isFinite(value) && value >= EARLIEST_TIME_MS && value <= LATEST_TIME_MS ? value : null
  }
  if (typeof value !== 'string' || value.length > 64 || !/^\d{4}-\d{2}-\d{2}/.test(value)) return null
  const ms = Date.parse(value)
  return Number.isNaN(ms) ? null : ms
}

/**
 * An id that is not there: missing, null, or a blank string. RudderStack's browser SDK sends
 * `"userId": ""` on every call of a visitor it has not identified (with an `anonymousId`), and Segment
 * reads a blank id as absent too.
 */
export function isAbsentId(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '')
}

function isId(value: unknown): boolean {
  return (
    (typeof value === 'string' && value.trim() !== '') ||
    (typeof value === 'number' && Number.isFinite(value))
  )
}

/** Characters as JSON Schema's `maxLength` counts them (an emoji is one, not two UTF-16 units). */
function codePoints(text: string): number {
  let count = 0
  for (const _ of text) count++
  return count
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`
}
