import type {
  AliasParams,
  GroupParams,
  IdentifyParams,
  PageParams,
  ScreenParams,
  TrackParams,
} from '../app/types.ts'
import { ValidationError } from './errors.ts'
import { MessageWriter, quote, type Serialized } from './json.ts'
import { uuid } from './uuid.ts'
import {
  expectIdentity,
  expectParams,
  optionalObject,
  optionalString,
  requiredString,
  timestampOf,
} from './validate.ts'

export type { Serialized } from './json.ts'

// One builder per call: it validates the call (throwing a ValidationError that names the field)
// and writes the message as JSON in Segment's HTTP Tracking API shape, with its exact UTF-8 size,
// ready to queue. Fields are checked in the order they are written.

/** A writer started with `type`, `messageId` and `timestamp`, then `userId` and `anonymousId` when given. */
function start(
  call: Serialized['type'],
  params: { messageId?: unknown; timestamp?: unknown },
  userId: string | undefined,
  anonymousId: string | undefined,
): MessageWriter {
  const given = optionalString(params.messageId, '.messageId', call)
  const messageId = given ?? uuid()
  const message = new MessageWriter(call, messageId, given === undefined, timestampOf(params.timestamp, call))
  message.string(',"userId":"', userId)
  message.string(',"anonymousId":"', anonymousId)
  return message
}

export function identifyMessage(params: IdentifyParams): Serialized {
  const call = 'identify'
  expectParams(params, call)
  expectIdentity(params.userId, params.anonymousId, call)
  const message = start(call, params, params.userId, params.anonymousId)
  message.object(',"traits":', params.traits, call)
  message.object(',"integrations":', params.integrations, call)
  return message.end(params.context, call)
}

export function trackMessage(params: TrackParams): Serialized {
  const call = 'track'
  expectParams(params, call)
  expectIdentity(params.userId, params.anonymousId, call)
  const event = requiredString(params.event, '.event', call, 'the event name')
  if (event.trim() === '')
    throw new ValidationError('.event', `${call}() .event must not be blank; got ${quote(event)}.`)
  const message = start(call, params, params.userId, params.anonymousId)
  message.string(',"event":"', event)
  message.object(',"properties":', params.properties, call)
  message.object(',"integrations":', params.integrations, call)
  return message.end(params.context, call)
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
  const message = start(call, params, params.userId, params.anonymousId)
  message.string(',"name":"', optionalString(params.name, '.name', call))
  message.string(',"category":"', optionalString(params.category, '.category', call))
  message.object(',"properties":', pageProperties(params), call)
  message.object(',"integrations":', params.integrations, call)
  return message.end(params.context, call)
}

export function screenMessage(params: ScreenParams): Serialized {
  const call = 'screen'
  expectParams(params, call)
  expectIdentity(params.userId, params.anonymousId, call)
  const message = start(call, params, params.userId, params.anonymousId)
  message.string(',"name":"', optionalString(params.name, '.name', call))
  message.string(',"category":"', optionalString(params.category, '.category', call))
  message.object(',"properties":', params.properties, call)
  message.object(',"integrations":', params.integrations, call)
  return message.end(params.context, call)
}

export function groupMessage(params: GroupParams): Serialized {
  const call = 'group'
  expectParams(params, call)
  expectIdentity(params.userId, params.anonymousId, call)
  const groupId = requiredString(params.groupId, '.groupId', call, 'the group identifier')
  const message = start(call, params, params.userId, params.anonymousId)
  message.string(',"groupId":"', groupId)
  message.object(',"traits":', params.traits, call)
  message.object(',"integrations":', params.integrations, call)
  return message.end(params.context, call)
}

export function aliasMessage(params: AliasParams): Serialized {
  const call = 'alias'
  expectParams(params, call)
  const userId = requiredString(params.userId, '.userId', call, 'the new identity')
  const previousId = requiredString(params.previousId, '.previousId', call, 'the identity to alias from')
  const anonymousId = optionalString(params.anonymousId, '.anonymousId', call)
  const message = start(call, params, userId, anonymousId)
  message.string(',"previousId":"', previousId)
  message.object(',"integrations":', params.integrations, call)
  return message.end(params.context, call)
}
