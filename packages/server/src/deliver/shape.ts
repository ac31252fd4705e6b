/**
 * The delivered JSON (the table in docs/webhooks.md): turns a stored message into the exact object
 * a Webhooks receiver gets, one per request. `shapeMessage` is the one entry point for every
 * deliverable type: the enriched Segment calls, and `delete` notifications.
 *
 * Every type but `delete` carries `version: 1`, `type`, `timestamp` (ISO 8601 UTC with milliseconds),
 * `messageId`, `context`, and `anonymousId` when present. Members are written in a fixed order
 * (identity, type-specific members, context, messageId, timestamp) so the same message always yields
 * the same bytes: a retry or a replay sends exactly what the first attempt signed. `delete` carries
 * only `type`, `userId` and `timestamp`.
 *
 * Decisions where the table is silent:
 * - Members the table does not list are not forwarded. `integrations` is an instruction to Sluice
 *   (routing), not data about the user. `receivedAt`, `originalTimestamp` and `sentAt` are Sluice's
 *   clock bookkeeping: `timestamp` is already the corrected event time, the others stay visible in the
 *   management API, and leaving them out keeps the documented shape the whole contract.
 * - `userId` is always present on page, screen, identify, track and group; it is `null` for an
 *   anonymous call, so each type has one fixed set of members a receiver can validate.
 * - `traits` (identify, group) and `properties` (track, page) default to `{}`; `context` to `{}`.
 * - A page property among `path`, `referrer`, `title`, `url` that neither the call's properties nor
 *   `context.page` give as a string is left out rather than invented.
 * - screen also carries `category` and `properties` when the call has them: dropping customer data
 *   is worse than one member more. Its `context.device/os/app` are simply the call's own context.
 */

import { isJsonObject } from '../lib/json-object.ts'

export type JsonObject = Record<string, unknown>

interface Common {
  anonymousId?: string
  context: JsonObject
  messageId: string
  timestamp: string
}

export type PageMessage = Common & {
  version: 1
  type: 'page'
  userId: string | null
  name?: string
  category?: string
  properties: JsonObject
}
export type ScreenMessage = Common & {
  version: 1
  type: 'screen'
  userId: string | null
  name?: string
  category?: string
  properties?: JsonObject
}
export type IdentifyMessage = Common & {
  version: 1
  type: 'identify'
  userId: string | null
  traits: JsonObject
}
export type TrackMessage = Common & {
  version: 1
  type: 'track'
  userId: string | null
  event: string
  properties: JsonObject
}
export type AliasMessage = Common & { version: 1; type: 'alias'; 'Previous ID': string; 'User ID': string }
export type GroupMessage = Common & {
  version: 1
  type: 'group'
  userId: string | null
  groupId: string
  traits: JsonObject
}
export interface DeleteMessage {
  type: 'delete'
  userId: string
  timestamp: string
}

export type DeliveredMessage =
  | PageMessage
  | ScreenMessage
  | IdentifyMessage
  | TrackMessage
  | AliasMessage
  | GroupMessage
  | DeleteMessage

/** The page properties that fall back to `context.page`, in the order they are written. */
const PAGE_FIELDS = ['path', 'referrer', 'title', 'url'] as const

/**
 * Shapes a stored message payload for delivery: an enriched Segment-format call, or a `delete`
 * notification stored as `{"type":"delete","userId":…,"timestamp":…}`. Throws a TypeError that names
 * what is missing when the payload cannot be delivered.
 */
export function shapeMessage(payload: JsonObject): DeliveredMessage {
  const type = payload.type
  // Each message is built member by member in its documented order, without spreading partial
  // objects: this runs for every delivery, and the spreads allocated an object per optional member.
  switch (type) {
    case 'page': {
      const message = withIdentity(type, payload)
      nameAndCategory(message, payload)
      message.properties = pageProperties(payload)
      return finish<PageMessage>(message, payload)
    }
    case 'screen': {
      const message = withIdentity(type, payload)
      nameAndCategory(message, payload)
      if (isJsonObject(payload.properties)) message.properties = payload.properties
      return finish<ScreenMessage>(message, payload)
    }
    case 'identify': {
      const message = withIdentity(type, payload)
      message.traits = objectOrEmpty(payload.traits)
      return finish<IdentifyMessage>(message, payload)
    }
    case 'track': {
      const message = withIdentity(type, payload)
      message.event = requiredString(payload, 'event')
      message.properties = objectOrEmpty(payload.properties)
      return finish<TrackMessage>(message, payload)
    }
    case 'alias': {
      // The documented alias shape names both ids with spaces and has no `userId` member.
      const message: JsonObject = {
        version: 1,
        type,
        'Previous ID': requiredString(payload, 'previousId'),
        'User ID': requiredString(payload, 'userId'),
      }
      addAnonymousId(message, payload)
      return finish<AliasMessage>(message, payload)
    }
    case 'group': {
      const message = withIdentity(type, payload)
      message.groupId = requiredString(payload, 'groupId')
      message.traits = objectOrEmpty(payload.traits)
      return finish<GroupMessage>(message, payload)
    }
    case 'delete':
      return shapeDelete({ userId: requiredString(payload, 'userId'), timestamp: deleteTimestamp(payload) })
    default:
      throw new TypeError(`Cannot shape a message of type ${JSON.stringify(type)} for delivery.`)
  }
}

/**
 * The `delete` notification sent when a deletion request names `userId`: only these three members
 * (no version, messageId or context). The user id must be a non-empty string: a delete for nobody
 * cannot be acted on.
 */
export function shapeDelete(input: { userId: string; timestamp: string | number | Date }): DeleteMessage {
  if (typeof input.userId !== 'string' || input.userId === '') {
    throw new TypeError('A delete message needs a non-empty string "userId" to be delivered.')
  }
  return { type: 'delete', userId: input.userId, timestamp: isoTimestamp(input.timestamp) }
}

/**
 * Serializes once: the same bytes are signed (`X-Signature`) and sent to every URL. JSON.stringify
 * escapes lone surrogates, so the body is always valid UTF-8.
 */
export function serializeMessage(message: DeliveredMessage): Buffer {
  return Buffer.from(JSON.stringify(message), 'utf8')
}

/** ISO 8601 UTC with milliseconds (`2026-01-31T12:00:00.000Z`), whatever spelling the input used. */
export function isoTimestamp(value: string | number | Date): string {
  const date = value instanceof Date ? value : new Date(value)
  if (Number.isNaN(date.getTime())) throw new TypeError(`Not a valid timestamp: ${JSON.stringify(value)}`)
  return date.toISOString()
}

/** `version`, `type`, `userId` (null when the call has none) and `anonymousId` when present: how most types begin. */
function withIdentity(type: string, payload: JsonObject): JsonObject {
  const message: JsonObject = { version: 1, type, userId: optionalString(payload.userId) ?? null }
  addAnonymousId(message, payload)
  return message
}

function addAnonymousId(message: JsonObject, payload: JsonObject): void {
  const anonymousId = optionalString(payload.anonymousId)
  if (anonymousId !== undefined) message.anonymousId = anonymousId
}

function nameAndCategory(message: JsonObject, payload: JsonObject): void {
  const name = optionalString(payload.name)
  if (name !== undefined) message.name = name
  const category = optionalString(payload.category)
  if (category !== undefined) message.category = category
}

/** Appends the members every non-delete type ends with: the message is then complete, as type `T`. */
function finish<T extends DeliveredMessage>(message: JsonObject, payload: JsonObject): T {
  message.context = objectOrEmpty(payload.context)
  message.messageId = requiredString(payload, 'messageId')
  message.timestamp = messageTimestamp(payload)
  return message as unknown as T
}

/**
 * path/referrer/title/url first (the call's string value, else `context.page`'s), then the rest.
 * Built with Object.fromEntries, which defines own members: assigning `properties[key] = value` would
 * turn a `"__proto__"` key sent by a client into the object's prototype and drop it from the body.
 */
function pageProperties(payload: JsonObject): JsonObject {
  const own = objectOrEmpty(payload.properties)
  const context = objectOrEmpty(payload.context)
  const fromContext = objectOrEmpty(context.page)
  const entries: Array<[string, unknown]> = []
  for (const field of PAGE_FIELDS) {
    const value = optionalString(own[field]) ?? optionalString(fromContext[field]) ?? own[field]
    if (value !== undefined) entries.push([field, value])
  }
  for (const [key, value] of Object.entries(own)) {
    if (!(PAGE_FIELDS as readonly string[]).includes(key)) entries.push([key, value])
  }
  return Object.fromEntries(entries)
}

/** A stored delete's `timestamp`: the time of the deletion request, which has no other fallback. */
function deleteTimestamp(payload: JsonObject): string | number {
  const timestamp = payload.timestamp
  if (typeof timestamp === 'string' || typeof timestamp === 'number') return timestamp
  throw new TypeError(
    'A delete message needs a "timestamp" (ISO 8601 text or epoch milliseconds) to be delivered.',
  )
}

/** The corrected `timestamp` set at ingest; `receivedAt` if it is somehow missing or unreadable. */
function messageTimestamp(payload: JsonObject): string {
  const timestamp = payload.timestamp
  // Ingest stores the timestamp in exactly the form delivered: no Date round trip per delivery.
  if (typeof timestamp === 'string' && isCanonicalIso(timestamp)) return timestamp
  for (const candidate of [timestamp, payload.receivedAt]) {
    if (typeof candidate === 'string' || typeof candidate === 'number') {
      const date = new Date(candidate)
      if (!Number.isNaN(date.getTime())) return date.toISOString()
    }
  }
  throw new TypeError(`Message ${String(payload.messageId)} has no valid timestamp or receivedAt.`)
}

/**
 * True when `text` is what `Date#toISOString` writes for some date in years 0000-9999
 * (`2026-01-31T12:00:00.000Z`): the pattern, and a date and time that exist. Such text round-trips
 * through Date unchanged, so it can be delivered as it is. Anything else (offsets, no milliseconds,
 * 24:00, Feb 30, leap seconds) goes the Date way, which normalizes or refuses it.
 */
export function isCanonicalIso(text: string): boolean {
  if (text.length !== 24 || text.charCodeAt(23) !== 0x5a /* Z */) return false
  for (let i = 0; i < 23; i++) {
    const code = text.charCodeAt(i)
    const separator = ISO_SEPARATORS[i]
    if (separator === undefined ? code < 0x30 || code > 0x39 : code !== separator) return false
  }
  const year = digits(text, 0, 4)
  const month = digits(text, 5, 2)
  const day = digits(text, 8, 2)
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    digits(text, 11, 2) <= 23 &&
    digits(text, 14, 2) <= 59 &&
    digits(text, 17, 2) <= 59
  )
}

/** Character codes expected at the separator positions of `YYYY-MM-DDTHH:MM:SS.sss`; digits elsewhere. */
const ISO_SEPARATORS: Readonly<Record<number, number>> = {
  4: 0x2d, // -
  7: 0x2d, // -
  10: 0x54, // T
  13: 0x3a, // :
  16: 0x3a, // :
  19: 0x2e, // .
}

function digits(text: string, from: number, count: number): number {
  let value = 0
  for (let i = from; i < from + count; i++) value = value * 10 + text.charCodeAt(i) - 0x30
  return value
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

function requiredString(payload: JsonObject, key: string): string {
  const value = payload[key]
  if (typeof value !== 'string') {
    throw new TypeError(`A ${String(payload.type)} message needs a string "${key}" to be delivered.`)
  }
  return value
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

function objectOrEmpty(value: unknown): JsonObject {
  return isJsonObject(value) ? value : {}
}
