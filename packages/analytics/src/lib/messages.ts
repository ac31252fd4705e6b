import type {
  AliasParams,
  GroupParams,
  IdentifyParams,
  MessageType,
  PageParams,
  ScreenParams,
  TrackParams,
} from '../app/types.ts'
import { ValidationError } from './errors.ts'
import { messageEnd, messageStart, objectMember, quote, stringMember } from './json.ts'
import {
  expectIdentity,
  expectParams,
  messageIdOf,
  optionalObject,
  optionalString,
  requiredString,
  timestampOf,
} from './validate.ts'

// One builder per call: it validates the call (throwing a ValidationError that names the field)
// and writes the message as JSON in Segment's HTTP Tracking API shape, ready to queue.

/** A validated message, serialized once. */
export interface Serialized {
  readonly type: MessageType
  readonly messageId: string
  readonly json: string
}

/** `,"userId":…,"anonymousId":…` for the members given (checked by expectIdentity). */
function identity(userId: string | undefined, anonymousId: string | undefined): string {
  return stringMember(',"userId":', userId) + stringMember(',"anonymousId":', anonymousId)
}

export function identifyMessage(params: IdentifyParams): Serialized {
  const call = 'identify'
  expectParams(params, call)
  expectIdentity(params.userId, params.anonymousId, call)
  const messageId = messageIdOf(params.messageId, call)
  const json =
    messageStart(call, messageId, timestampOf(params.timestamp, call)) +
    identity(params.userId, params.anonymousId) +
    objectMember(',"traits":', params.traits, call) +
    objectMember(',"integrations":', params.integrations, call) +
    messageEnd(params.context, call)
  return { type: call, messageId, json }
}

export function trackMessage(params: TrackParams): Serialized {
  const call = 'track'
  expectParams(params, call)
  expectIdentity(params.userId, params.anonymousId, call)
  const event = requiredString(params.event, '.event', call, 'the event name')
  if (event.trim() === '')
    throw new ValidationError('.event', `${call}() .event must not be blank; got ${quote(event)}.`)
  const messageId = messageIdOf(params.messageId, call)
  const json =
    messageStart(call, messageId, timestampOf(params.timestamp, call)) +
    identity(params.userId, params.anonymousId) +
    stringMember(',"event":', event) +
    objectMember(',"properties":', params.properties, call) +
    objectMember(',"integrations":', params.integrations, call) +
    messageEnd(params.context, call)
  return { type: call, messageId, json }
}

/** `url`, `title`, `referrer` and `path` given on the call go into `properties`, as the seed's Page does. */
function pageProperties(params: PageParams): Record<string, unknown> | undefined {
  const properties = optionalObject(params.properties, '.properties', 'page')
  const url = optionalString(params.url, '.url', 'page')
  const title = optionalString(params.title, '.title', 'page')
  const referrer = optionalString(params.referrer, '.referrer', 'page')
  const path = optionalString(params.path, '.path', 'page')
  if (url === undefined && title === undefined && referrer === undefined && path === undefined)
    return properties
  const merged: Record<string, unknown> = { ...properties }
  if (url !== undefined) merged.url = url
  if (title !== undefined) merged.title = title
  if (referrer !== undefined) merged.referrer = referrer
  if (path !== undefined) merged.path = path
  return merged
}

export function pageMessage(params: PageParams): Serialized {
  const call = 'page'
  expectParams(params, call)
  expectIdentity(params.userId, params.anonymousId, call)
  const messageId = messageIdOf(params.messageId, call)
  const json =
    messageStart(call, messageId, timestampOf(params.timestamp, call)) +
    identity(params.userId, params.anonymousId) +
    stringMember(',"name":', optionalString(params.name, '.name', call)) +
    stringMember(',"category":', optionalString(params.category, '.category', call)) +
    objectMember(',"properties":', pageProperties(params), call) +
    objectMember(',"integrations":', params.integrations, call) +
    messageEnd(params.context, call)
  return { type: call, messageId, json }
}

export function screenMessage(params: ScreenParams): Serialized {
  const call = 'screen'
  expectParams(params, call)
  expectIdentity(params.userId, params.anonymousId, call)
  const messageId = messageIdOf(params.messageId, call)
  const json =
    messageStart(call, messageId, timestampOf(params.timestamp, call)) +
    identity(params.userId, params.anonymousId) +
    stringMember(',"name":', optionalString(params.name, '.name', call)) +
    stringMember(',"category":', optionalString(params.category, '.category', call)) +
    objectMember(',"properties":', params.properties, call) +
    objectMember(',"integrations":', params.integrations, call) +
    messageEnd(params.context, call)
  return { type: call, messageId, json }
}

export function groupMessage(params: GroupParams): Serialized {
  const call = 'group'
  expectParams(params, call)
  expectIdentity(params.userId, params.anonymousId, call)
  const groupId = requiredString(params.groupId, '.groupId', call, 'the group identifier')
  const messageId = messageIdOf(params.messageId, call)
  const json =
    messageStart(call, messageId, timestampOf(params.timestamp, call)) +
    identity(params.userId, params.anonymousId) +
    stringMember(',"groupId":', groupId) +
    objectMember(',"traits":', params.traits, call) +
    objectMember(',"integrations":', params.integrations, call) +
    messageEnd(params.context, call)
  return { type: call, messageId, json }
}

export function aliasMessage(params: AliasParams): Serialized {
  const call = 'alias'
  expectParams(params, call)
  const userId = requiredString(params.userId, '.userId', call, 'the new identity')
  const previousId = requiredString(params.previousId, '.previousId', call, 'the identity to alias from')
  const anonymousId = optionalString(params.anonymousId, '.anonymousId', call)
  const messageId = messageIdOf(params.messageId, call)
  const json =
    messageStart(call, messageId, timestampOf(params.timestamp, call)) +
    identity(userId, anonymousId) +
    stringMember(',"previousId":', previousId) +
    objectMember(',"integrations":', params.integrations, call) +
    messageEnd(params.context, call)
  return { type: call, messageId, json }
}
