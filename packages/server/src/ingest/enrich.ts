import type { MessageType } from '../domain/messages.ts'
import { newMessageId } from '../lib/ids.ts'
import { isJsonObject } from '../lib/json-object.ts'
import { isAbsentId, parseTime } from './validate.ts'

const ID_FIELDS = ['userId', 'anonymousId', 'groupId', 'previousId'] as const
const USER_ID_FIELDS = ['userId', 'anonymousId'] as const

/** What the request around a message contributes to it. */
export interface RequestContext {
  receivedAt: number
  /** `receivedAt` as ISO 8601, formatted once per request. */
  receivedAtIso: string
  /** The connection's address, for `context.ip` when the message has none. */
  ip: string
  /** Top-level `sentAt`, `context` and `integrations` of a `/v1/batch` body. */
  sentAt?: unknown
  context?: Record<string, unknown>
  integrations?: Record<string, unknown>
}

/**
 * Completes a valid message (docs/tracking-api.md): messageId (kept if given), receivedAt, originalTimestamp,
 * the corrected timestamp, context.ip, and the batch's context/integrations (the message's own keys
 * win). Ids given as numbers become strings. The write key is never stored.
 * Objects are copied with spread, never Object.assign, so a `__proto__` key stays plain data.
 */
export function enrichMessage(
  message: Record<string, unknown>,
  type: MessageType,
  request: RequestContext,
): Record<string, unknown> {
  let rest = message
  if ('writeKey' in message) {
    const { writeKey: _writeKey, ...withoutKey } = message
    rest = withoutKey
  }
  // RudderStack's SDKs send the event's time as `originalTimestamp` and no `timestamp`.
  const clientTimestamp = message.timestamp ?? message.originalTimestamp
  const clientTime = parseTime(clientTimestamp)
  const sentAt = parseTime(message.sentAt ?? request.sentAt)
  // Clock-skew correction: the client's clock may be off, but the interval between the event and
  // sending it is trustworthy, so re-anchor that interval on the server's clock.
  const timestamp =
    clientTime === null
      ? request.receivedAt
      : sentAt === null
        ? clientTime
        : request.receivedAt - (sentAt - clientTime)
  const context = { ...request.context, ...(message.context as Record<string, unknown> | undefined) }
  if (context.ip === undefined || context.ip === null || context.ip === '') context.ip = request.ip
  const enriched: Record<string, unknown> = {
    ...rest,
    type,
    messageId: typeof message.messageId === 'string' ? message.messageId : newMessageId(),
    timestamp: clientTime === null ? request.receivedAtIso : new Date(timestamp).toISOString(),
    receivedAt: request.receivedAtIso,
    context,
  }
  if (clientTime !== null) {
    enriched.originalTimestamp =
      typeof clientTimestamp === 'string' ? clientTimestamp : new Date(clientTime).toISOString()
  }
  if (sentAt !== null) enriched.sentAt = new Date(sentAt).toISOString()
  if (request.integrations || message.integrations) {
    enriched.integrations = {
      ...request.integrations,
      ...(message.integrations as Record<string, unknown> | undefined),
    }
  }
  for (const field of ID_FIELDS) {
    if (typeof enriched[field] === 'number') enriched[field] = String(enriched[field])
  }
  // A blank userId or anonymousId is an absent one (validate.ts): not stored, never delivered as a user.
  for (const field of USER_ID_FIELDS) {
    if (typeof enriched[field] === 'string' && isAbsentId(enriched[field])) delete enriched[field]
  }
  // RudderStack's browser SDK sends an identify's traits only as `context.traits`.
  if (type === 'identify' && !isJsonObject(enriched.traits) && isJsonObject(context.traits)) {
    enriched.traits = context.traits
  }
  return enriched
}
