import { NotFoundError } from './errors.ts'

/**
 * Destinations: where messages go. A destination instance is connected to one or more sources and
 * is enabled or disabled; Webhooks is the one kind so far (docs/webhooks.md).
 */

/** Destination kinds Sluice can deliver to. */
export const DESTINATION_TYPES = ['webhooks'] as const
export type DestinationType = (typeof DESTINATION_TYPES)[number]
/** The name a call's `integrations` object uses for each kind (case sensitive). */
export const DESTINATION_NAMES: Readonly<Record<DestinationType, string>> = { webhooks: 'Webhooks' }

export interface WebhookEndpoint {
  url: string
  headers: Record<string, string>
}

export const WEBHOOK_METHODS = ['POST', 'PUT', 'PATCH'] as const
export type WebhookMethod = (typeof WEBHOOK_METHODS)[number]

export const FILTER_ACTIONS = ['drop', 'sample', 'dropFields', 'allowFields'] as const
export type FilterAction = (typeof FILTER_ACTIONS)[number]

/** One of a destination's filters (route/filters.ts), in Segment's destination-filter vocabulary. */
export interface DestinationFilter {
  /** Which calls the rule applies to, in subscription syntax. Default: every call. */
  if?: string
  action: FilterAction
  /** `sample`: the share of matching calls kept, 0 to 100. */
  percent?: number
  /** `dropFields` / `allowFields`: dot paths such as `properties.email`. */
  fields?: string[]
}

export interface WebhooksSettings {
  webhooks: WebhookEndpoint[]
  /** Never leaves the server through the management API; `null` when unset. */
  sharedSecret: string | null
  /** Which calls it gets, in Segment's subscription syntax (lib/subscription-language.ts). Default: every call. */
  subscription?: string
  /** Rules applied in order after the subscription (route/filters.ts). Default: none. */
  filters?: DestinationFilter[]
  /** The body, in Segment's mapping language (lib/mapping-language.ts). Default: the documented shape. */
  mapping?: Record<string, unknown>
  /** The HTTP method of each request. Default `POST`. */
  method?: WebhookMethod
  /** Several messages per request, as a JSON array; absent: one message per request. */
  batching?: BatchingSettings
  /** Disables a URL whose every request failed for this long. Default: never (only `410 Gone` does). */
  autoDisable?: AutoDisableSettings
  /** Most requests per second to the destination's URLs together, per process. Default: no cap. */
  maxRequestsPerSecond?: number
  /** Which signatures each request carries. Absent: `DEFAULT_SIGNING`. */
  signing?: SigningSettings
  /** The Standard Webhooks secret (`whsec_…`); generated when `signing.standardWebhooks` is turned on. */
  standardWebhooksSecret?: string
  /**
   * Sluice's own state, not a setting (absent from the settings' schema, so configuration as code keeps
   * it as it is): secrets replaced by a rotation that still sign until their grace ends, and the
   * rotations made (times only).
   */
  rotation?: RotationState
}

export interface AutoDisableSettings {
  /** Hours of nothing but failures (1–720). */
  afterHours: number
}

/** The signatures a request carries (deliver/signing.ts). */
export interface SigningSettings {
  /** `X-Signature` (hex HMAC-SHA1 of the body) when a shared secret is set. Default true. */
  xSignature: boolean
  /** The Standard Webhooks headers `webhook-id`, `webhook-timestamp`, `webhook-signature`. Default false. */
  standardWebhooks: boolean
}

export const DEFAULT_SIGNING: Readonly<SigningSettings> = { xSignature: true, standardWebhooks: false }

/** The secrets a destination signs with, by the `kind` a rotation names. */
export const SECRET_KINDS = ['standardWebhooks', 'sharedSecret'] as const
export type SecretKind = (typeof SECRET_KINDS)[number]

/** How long a secret replaced by a rotation keeps signing beside the new one, in seconds. */
export const GRACE_PERIOD_SECONDS = { min: 0, max: 604_800, default: 86_400 } as const

/** A secret replaced by a rotation, still signing beside the new one until `until` (epoch ms). */
export interface PreviousSecret {
  secret: string
  until: number
}

/** One rotation, as listed: when it was made and when the replaced secret stops signing (epoch ms). */
export interface SecretRotation {
  kind: SecretKind
  rotatedAt: number
  graceEndsAt: number
}

export interface RotationState {
  previous: Partial<Record<SecretKind, PreviousSecret>>
  /** Newest last, at most `MAX_LISTED_ROTATIONS`. */
  rotations: SecretRotation[]
}

/** When a destination's batch is flushed: whichever limit is reached first. */
export interface BatchingSettings {
  /** Most messages in one request (1–1,000). */
  maxEvents: number
  /** Most bytes in one request body (up to 512,000); a single larger message goes alone. */
  maxBytes: number
  /** Longest the oldest message of an unfilled batch waits before it is sent anyway (0–60,000 ms). */
  maxWaitMs: number
}

export interface Destination {
  id: string
  name: string
  type: DestinationType
  enabled: boolean
  sourceIds: string[]
  settings: WebhooksSettings
  createdAt: number
  updatedAt: number
}

export function destinationNotFound(id: string): NotFoundError {
  return new NotFoundError(
    'destination_not_found',
    `No destination has id "${id}". List the existing destinations with GET /api/v1/destinations.`,
  )
}
