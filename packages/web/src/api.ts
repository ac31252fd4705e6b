/**
 * The management API, as the web app calls it: same origin, the session cookie, and the CSRF header on
 * every change. Every error comes back as an ApiError carrying the API's code, message and field.
 */

export class ApiError extends Error {
  readonly status: number
  readonly code: string
  /** JSON pointer of the input the error concerns, e.g. `/settings/webhooks/0/url`. */
  readonly field: string | undefined

  constructor(status: number, code: string, message: string, field?: string) {
    super(message)
    this.status = status
    this.code = code
    this.field = field
  }
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (method !== 'GET') headers['x-sluice-csrf'] = '1'
  if (body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(`/api/v1${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  const parsed = text ? JSON.parse(text) : undefined
  if (!response.ok) {
    const error = parsed?.error ?? {}
    throw new ApiError(
      response.status,
      error.code ?? 'http_error',
      error.message ?? `Sluice answered ${response.status}.`,
      error.field,
    )
  }
  return parsed as T
}

export const get = <T>(path: string) => api<T>('GET', path)

export interface Session {
  role: 'admin' | 'viewer'
  name: string
}

export interface Source {
  id: string
  name: string
  writeKey: string
  enabled: boolean
  createdAt: string
  stats: { accepted: number; duplicates: number; rejected: number }
}

export interface DeliveryStats {
  pending: number
  retrying: number
  delivered: number
  failed: number
  deadLettered: number
  latencyP50Ms: number | null
  latencyP95Ms: number | null
}

export interface Destination {
  id: string
  name: string
  type: 'webhooks'
  enabled: boolean
  sourceIds: string[]
  settings: { webhooks: { url: string; headers: Record<string, string> }[]; sharedSecretSet: boolean }
  createdAt: string
  updatedAt: string
  stats: DeliveryStats
  warnings?: { field: string; message: string }[]
}

export interface Attempt {
  attemptedAt: string
  url: string
  statusCode: number | null
  errorKind: string | null
  errorText: string | null
  latencyMs: number
  responseExcerpt: string | null
}

export interface Delivery {
  id: number
  destinationId: string
  sourceId: string
  messageId: string
  type: string
  status: 'pending' | 'retrying' | 'delivered' | 'failed'
  deadLettered: boolean
  attemptCount: number
  nextAttemptAt: string | null
  firstAttemptAt: string | null
  createdAt: string
  updatedAt: string
  attempts: Attempt[]
}

export interface DeliveryRequest {
  body: string
  requests: { url: string; headers: Record<string, string> }[]
}

export interface AccessToken {
  id: string
  name: string
  role: 'admin' | 'viewer'
  createdAt: string
  lastUsedAt: string | null
}

export const REGULATION_TYPES = [
  'DELETE_ONLY',
  'SUPPRESS_ONLY',
  'SUPPRESS_WITH_DELETE',
  'UNSUPPRESS',
] as const
export type RegulationType = (typeof REGULATION_TYPES)[number]
export type RegulationStatus = 'INITIALIZED' | 'RUNNING' | 'FINISHED' | 'PARTIAL_SUCCESS' | 'FAILED'

export interface Regulation {
  id: string
  regulationType: RegulationType
  subjectType: string
  subjectIds: string[]
  sourceIds: string[] | null
  status: RegulationStatus
  createdAt: string
  finishedAt: string | null
  destinations: { destinationId: string; status: RegulationStatus; delivered: number; failed: number }[]
  erased: { messages: number; profiles: number }
}

export interface Suppression {
  userId: string
  sourceId: string | null
  regulationId: string
  createdAt: string
}

/** An audience definition node, as the API takes it. */
export type AudienceNode =
  | { all: AudienceNode[] }
  | { any: AudienceNode[] }
  | { not: AudienceNode }
  | {
      event: string
      where?: { property: string; op: string; value?: unknown }[]
      count?: { op: string; value: number }
      withinDays?: number
    }
  | { trait: string; op: string; value?: unknown }
  | { computedTrait: string; op: string; value?: unknown }
  | { audience: string }

export interface Audience {
  id: string
  name: string
  key: string
  definition: AudienceNode
  destinationIds: string[]
  includeAnonymous: boolean
  status: 'computing' | 'live'
  size: number
  lastSyncAt: string | null
  createdAt: string
  updatedAt: string
}

export interface ComputedTrait {
  id: string
  name: string
  key: string
  kind: string
  event: string
  property: string | null
  where: { property: string; op: string; value?: unknown }[]
  withinDays: number | null
  destinationIds: string[]
  status: 'computing' | 'live'
  createdAt: string
  updatedAt: string
}

export interface Profile {
  id: string
  userIds: string[]
  anonymousIds: string[]
  traits: Record<string, unknown>
  computedTraits: Record<string, unknown>
  audiences: string[]
  firstSeenAt: string
  lastSeenAt: string
}

export interface ProfileEvent {
  sourceId: string
  messageId: string
  type: string
  event: string | null
  timestamp: string
  properties: Record<string, unknown>
}
