/**
 * How domain records look through the management API: ISO 8601 times, and destination settings
 * without the shared secret (only whether one is set). Callers who may not see secrets (viewer tokens)
 * get write keys, header values and the secret parts of webhook URLs masked, wherever a URL is shown:
 * destination settings, a delivery's attempts and exact request, test-send results. The view types
 * come from the response schemas.
 */
import { toAttemptRecord } from '../deliver/delivery-outcome.ts'
import type { DeliveryRequest } from '../deliver/delivery-request.ts'
import type { AttemptResult } from '../deliver/http-sender.ts'
import type { AudienceWithSize } from '../domain/audience-service.ts'
import type { ComputedTrait } from '../domain/computed-traits.ts'
import type { Delivery, DeliveryAttempt, DeliveryStats } from '../domain/deliveries.ts'
import type { DestinationWithStats } from '../domain/destination-service.ts'
import { DEFAULT_SIGNING, type Destination, type SecretRotation } from '../domain/destinations.ts'
import type { AlertSettings, OperationalEvent } from '../domain/health-store.ts'
import type { Profile, ProfileEvent, ProfileIdentities } from '../domain/profiles.ts'
import type { Regulation, Suppression } from '../domain/regulations.ts'
import type { SourceWithStats } from '../domain/source-service.ts'
import type { AccessToken } from '../domain/tokens.ts'
import { escapePointerToken } from '../lib/json-pointer.ts'
import type { TokenView } from './access-schemas.ts'
import type { AlertSettingsView, NoticeView } from './alert-schemas.ts'
import type { AudienceView } from './audience-schemas.ts'
import type { ComputedTraitView } from './computed-trait-schemas.ts'
import type {
  AttemptResultView,
  AttemptView,
  DeliveryRequestView,
  DeliveryStatsView,
  DeliveryView,
} from './delivery-schemas.ts'
import type {
  DeliveryPolicySettingsView,
  DestinationView,
  SecretRotationView,
} from './destination-schemas.ts'
import type { ProfileEventView, ProfileIdentitiesView, ProfileView } from './profile-schemas.ts'
import type { RegulationView, SuppressionView } from './regulation-schemas.ts'
import type { SourceView } from './source-schemas.ts'

/** What a secret reads back as for callers who may not see it. */
export const MASKED = '••••••••'

export function sourceView({ source, stats }: SourceWithStats, revealSecrets = true): SourceView {
  return {
    id: source.id,
    name: source.name,
    writeKey: revealSecrets ? source.writeKey : MASKED,
    enabled: source.enabled,
    createdAt: iso(source.createdAt),
    stats: {
      accepted: stats.accepted,
      duplicates: stats.duplicates,
      rejected: stats.rejected,
      suppressed: stats.suppressed,
    },
  }
}

/**
 * A webhook URL as a viewer sees it: user name, password, every query value and the fragment masked,
 * since receivers often take their credentials there (`https://user:pass@host/…?api_key=…`); scheme,
 * host, port, path and query parameter names stay, so the viewer can still tell the URLs apart.
 */
export function urlForViewer(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return MASKED
  }
  const userinfo = parsed.username !== '' || parsed.password !== '' ? `${MASKED}@` : ''
  const query = parsed.search
    .slice(1)
    .split('&')
    .filter((part) => part !== '')
    .map((part) => {
      const equals = part.indexOf('=')
      // A bare `?token` is a value, not a name.
      if (equals < 0) return MASKED
      return equals === part.length - 1 ? part : `${part.slice(0, equals + 1)}${MASKED}`
    })
    .join('&')
  return `${parsed.protocol}//${userinfo}${parsed.host}${parsed.pathname}${query === '' ? '' : `?${query}`}${parsed.hash === '' ? '' : `#${MASKED}`}`
}

function shownUrl(url: string, revealSecrets: boolean): string {
  return revealSecrets ? url : urlForViewer(url)
}

/** Static header values often carry credentials (API keys, basic auth), so viewers see none of them. */
function staticHeaderValues(headers: Record<string, string>, revealSecrets: boolean): Record<string, string> {
  return revealSecrets
    ? { ...headers }
    : Object.fromEntries(Object.keys(headers).map((name) => [name, MASKED]))
}

/**
 * A configuration document (GET /config) as a viewer sees it: webhook URLs' secret parts and static
 * header values masked, as everywhere else. Applying it is refused (`maskedValues`).
 */
export function configForViewer(document: Record<string, unknown>): Record<string, unknown> {
  const destinations = document.destinations as Record<string, { settings: { webhooks?: unknown } }>
  return {
    ...document,
    destinations: Object.fromEntries(
      Object.entries(destinations).map(([name, destination]) => {
        const webhooks = (destination.settings.webhooks ?? []) as {
          url: string
          headers: Record<string, string>
        }[]
        const masked = webhooks.map(({ url, headers }) => ({
          url: shownUrl(url, false),
          headers: staticHeaderValues(headers, false),
        }))
        return [name, { ...destination, settings: { ...destination.settings, webhooks: masked } }]
      }),
    ),
  }
}

/** The JSON pointers of every string in `value` that holds a masked secret (so came from a viewer's export). */
export function maskedValues(value: unknown, pointer = ''): string[] {
  if (typeof value === 'string') return value.includes(MASKED) ? [pointer] : []
  if (Array.isArray(value)) return value.flatMap((item, index) => maskedValues(item, `${pointer}/${index}`))
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([key, member]) =>
    maskedValues(member, `${pointer}/${escapePointerToken(key)}`),
  )
}

export function deliveryRequestView(request: DeliveryRequest, revealSecrets: boolean): DeliveryRequestView {
  return {
    method: request.method,
    body: request.body,
    requests: request.requests.map(({ url, staticHeaders, sluiceHeaders }) => ({
      url: shownUrl(url, revealSecrets),
      headers: { ...staticHeaderValues(staticHeaders, revealSecrets), ...sluiceHeaders },
    })),
  }
}

export function destinationView(
  { destination, stats, health }: DestinationWithStats,
  revealSecrets = true,
): DestinationView {
  return {
    id: destination.id,
    name: destination.name,
    type: destination.type,
    enabled: destination.enabled,
    sourceIds: [...destination.sourceIds],
    settings: {
      webhooks: destination.settings.webhooks.map(({ url, headers }) => ({
        url: shownUrl(url, revealSecrets),
        headers: staticHeaderValues(headers, revealSecrets),
      })),
      sharedSecretSet: destination.settings.sharedSecret !== null,
      ...deliveryPolicyView(destination.settings),
      ...(destination.settings.batching ? { batching: { ...destination.settings.batching } } : {}),
      signing: { ...(destination.settings.signing ?? DEFAULT_SIGNING) },
      standardWebhooksSecretSet: destination.settings.standardWebhooksSecret !== undefined,
    },
    createdAt: iso(destination.createdAt),
    updatedAt: iso(destination.updatedAt),
    stats: statsView(stats),
    health: health.map((each) => ({
      url: shownUrl(each.url, revealSecrets),
      state: each.state,
      consecutiveFailures: each.consecutiveFailures,
      lastSuccessAt: isoOrNull(each.lastSuccessAt),
      lastFailureAt: isoOrNull(each.lastFailureAt),
      lastError: each.lastError,
      successRate1h: each.successRate1h,
      disabledAt: isoOrNull(each.disabledAt),
      disabledReason: each.disabledReason,
    })),
  }
}

export function rotationView(rotation: SecretRotation): SecretRotationView {
  return {
    kind: rotation.kind,
    rotatedAt: iso(rotation.rotatedAt),
    graceEndsAt: iso(rotation.graceEndsAt),
  }
}

/** The optional delivery settings, shown as saved (none of them holds a secret); unset ones are left out. */
function deliveryPolicyView(settings: Destination['settings']): DeliveryPolicySettingsView {
  const view: DeliveryPolicySettingsView = {}
  if (settings.subscription !== undefined) view.subscription = settings.subscription
  if (settings.filters !== undefined) view.filters = settings.filters.map((filter) => ({ ...filter }))
  if (settings.mapping !== undefined) view.mapping = settings.mapping
  if (settings.method !== undefined) view.method = settings.method
  if (settings.autoDisable !== undefined) view.autoDisable = { ...settings.autoDisable }
  if (settings.maxRequestsPerSecond !== undefined) view.maxRequestsPerSecond = settings.maxRequestsPerSecond
  return view
}

export function statsView(stats: DeliveryStats): DeliveryStatsView {
  return {
    pending: stats.pending,
    retrying: stats.retrying,
    delivered: stats.delivered,
    failed: stats.failed,
    deadLettered: stats.deadLettered,
    latencyP50Ms: stats.latencyP50Ms,
    latencyP95Ms: stats.latencyP95Ms,
    filtered: stats.filtered,
    sampledOut: stats.sampledOut,
  }
}

export function deliveryView(delivery: Delivery, revealSecrets: boolean): DeliveryView {
  return {
    id: delivery.id,
    destinationId: delivery.destinationId,
    sourceId: delivery.sourceId,
    messageId: delivery.messageId,
    type: delivery.type,
    userId: delivery.userId,
    anonymousId: delivery.anonymousId,
    event: delivery.event,
    status: delivery.status,
    deadLettered: delivery.deadLettered,
    attemptCount: delivery.attemptCount,
    // Only batched deliveries carry it: a destination without batching answers as it always did.
    ...(delivery.batchId === null ? {} : { batchId: delivery.batchId }),
    ...(delivery.replayId === null ? {} : { replayId: delivery.replayId }),
    nextAttemptAt: isoOrNull(delivery.nextAttemptAt),
    firstAttemptAt: isoOrNull(delivery.firstAttemptAt),
    createdAt: iso(delivery.createdAt),
    updatedAt: iso(delivery.updatedAt),
    attempts: delivery.attempts.map((attempt) => attemptView(attempt, revealSecrets)),
  }
}

function attemptView(attempt: DeliveryAttempt, revealSecrets: boolean): AttemptView {
  return {
    attemptedAt: iso(attempt.attemptedAt),
    url: shownUrl(attempt.url, revealSecrets),
    statusCode: attempt.statusCode,
    errorKind: attempt.errorKind,
    errorText: attempt.errorText,
    latencyMs: attempt.latencyMs,
    responseExcerpt: attempt.responseExcerpt,
  }
}

/** A test send's result: the members of a recorded attempt (as it would be recorded), without its time. */
export function attemptResultView(result: AttemptResult, revealSecrets: boolean): AttemptResultView {
  const { attemptedAt: _attemptedAt, ...view } = toAttemptRecord(result)
  return { ...view, url: shownUrl(view.url, revealSecrets) }
}

export function regulationView(regulation: Regulation): RegulationView {
  return {
    ...regulation,
    subjectIds: [...regulation.subjectIds],
    sourceIds: regulation.sourceIds && [...regulation.sourceIds],
    createdAt: iso(regulation.createdAt),
    finishedAt: isoOrNull(regulation.finishedAt),
    destinations: regulation.destinations.map((each) => ({ ...each })),
    erased: { ...regulation.erased },
  }
}

export function suppressionView(suppression: Suppression): SuppressionView {
  return { ...suppression, createdAt: iso(suppression.createdAt) }
}

export function tokenView(token: AccessToken): TokenView {
  return {
    id: token.id,
    name: token.name,
    role: token.role,
    createdAt: iso(token.createdAt),
    lastUsedAt: isoOrNull(token.lastUsedAt),
  }
}

export function profileIdentitiesView(identities: ProfileIdentities): ProfileIdentitiesView {
  return {
    profileId: identities.profileId,
    userIds: [...identities.userIds],
    anonymousIds: [...identities.anonymousIds],
  }
}

export function profileView(profile: Profile): ProfileView {
  return { ...profile, firstSeenAt: iso(profile.firstSeenAt), lastSeenAt: iso(profile.lastSeenAt) }
}

export function computedTraitView(trait: ComputedTrait): ComputedTraitView {
  return {
    ...trait,
    where: [...trait.where],
    createdAt: iso(trait.createdAt),
    updatedAt: iso(trait.updatedAt),
  }
}

export function audienceView({ audience, size }: AudienceWithSize): AudienceView {
  return {
    ...audience,
    definition: audience.definition as AudienceView['definition'],
    size,
    lastSyncAt: isoOrNull(audience.lastSyncAt),
    createdAt: iso(audience.createdAt),
    updatedAt: iso(audience.updatedAt),
  }
}

export function profileEventView(event: ProfileEvent): ProfileEventView {
  return { ...event, timestamp: iso(event.timestamp) }
}

function iso(epochMs: number): string {
  return new Date(epochMs).toISOString()
}

function isoOrNull(epochMs: number | null): string | null {
  return epochMs === null ? null : iso(epochMs)
}

/** The alert settings; the secret masked unless it was just generated (`shownSecret`). */
export function alertSettingsView(settings: AlertSettings, shownSecret: string | null): AlertSettingsView {
  return {
    url: settings.url,
    sharedSecret: shownSecret ?? `whsec_…${settings.sharedSecret.slice(-4)}`,
    events: settings.events === null ? null : [...settings.events],
    updatedAt: iso(settings.updatedAt),
  }
}

/** An operational event as a notice; a URL in it is masked for viewers, as everywhere. */
export function noticeView(event: OperationalEvent, revealSecrets = true): NoticeView {
  const { url } = event.data
  return {
    id: event.id,
    type: event.type,
    createdAt: iso(event.createdAt),
    data: typeof url === 'string' ? { ...event.data, url: shownUrl(url, revealSecrets) } : event.data,
    alertStatus: event.alertStatus,
    alertAttempts: event.attemptCount,
    alertError: event.lastError,
  }
}
