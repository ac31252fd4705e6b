import type { DeliveryError } from '../lib/errors.ts'

/** The six Segment call types. */
export type MessageType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias'

/**
 * Which destinations get the message: keys are destination names, case sensitive (`Webhooks`);
 * `All: false` turns off every destination not set to `true`. Everything is on by default.
 */
export type Integrations = Record<string, boolean | Record<string, unknown>>

/** Who the call is about: a `userId`, an `anonymousId`, or both. */
export type Identity = { userId: string; anonymousId?: string } | { userId?: string; anonymousId: string }

/** Fields every call accepts. */
export interface CommonFields {
  /** When it happened: a Date or an ISO 8601 string. Default: now. Set it to import past data. */
  timestamp?: Date | string
  /** Extra context (`ip`, `page`, `device`…); not an attribute of the user. `library` is added. */
  context?: Record<string, unknown>
  /** Per-destination switches; see {@link Integrations}. */
  integrations?: Integrations
  /** Unique id used by the server to drop duplicates. Default: a random UUID. */
  messageId?: string
}

export type IdentifyParams = Identity & CommonFields & { traits?: Record<string, unknown> }

export type TrackParams = Identity &
  CommonFields & {
    /** The action's name, e.g. `Order Completed`. Required. */
    event: string
    properties?: Record<string, unknown>
  }

export type PageParams = Identity &
  CommonFields & {
    name?: string
    category?: string
    properties?: Record<string, unknown>
    /** Copied into `properties.url`. */
    url?: string
    /** Copied into `properties.title`. */
    title?: string
    /** Copied into `properties.referrer`. */
    referrer?: string
    /** Copied into `properties.path`. */
    path?: string
  }

export type ScreenParams = Identity &
  CommonFields & {
    name?: string
    category?: string
    properties?: Record<string, unknown>
  }

export type GroupParams = Identity &
  CommonFields & {
    /** The group (company, organization, account, project, team). Required. */
    groupId: string
    traits?: Record<string, unknown>
  }

export type AliasParams = CommonFields & {
  /** The new identity. Required. */
  userId: string
  /** The identity to alias from (often the anonymousId used so far). Required. */
  previousId: string
  anonymousId?: string
}

/** A batch (or the accepted part of one) was stored by the server. */
export interface DeliveredEvent {
  readonly messageIds: readonly string[]
  readonly status: number
  /** 1 when it went through on the first try. */
  readonly attempts: number
}

/**
 * Messages that will not be delivered: a whole batch after a final answer or the last retry, or a
 * single message the server refused inside an accepted batch (`error.kind === 'rejected'`).
 */
export interface FailedEvent {
  readonly messageIds: readonly string[]
  readonly error: DeliveryError
  readonly attempts: number
}

/** A call was not queued because the queue was full (`maxQueueSize` or `maxQueueBytes`). */
export interface DroppedEvent {
  readonly messageId: string
  readonly type: MessageType
  readonly reason: 'queue_full'
  /** Messages dropped by this client so far, this one included. */
  readonly total: number
}

/** A batch attempt failed and will be retried after `delay` ms. */
export interface RetryEvent {
  readonly messageIds: readonly string[]
  readonly error: DeliveryError
  /** The attempt that failed (1 = the first send). */
  readonly attempt: number
  readonly delay: number
}

export interface AnalyticsEvents {
  delivered: DeliveredEvent
  failed: FailedEvent
  dropped: DroppedEvent
  retry: RetryEvent
}

/** Message counts since the client was created. */
export interface AnalyticsStats {
  /** Queued or being sent right now. */
  pending: number
  delivered: number
  /** Failed batches plus messages the server rejected. */
  failed: number
  dropped: number
}
