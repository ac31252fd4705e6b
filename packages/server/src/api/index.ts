/**
 * The management API as its clients see it (`@sluice/server/api`): the records it answers with, the
 * bodies and query strings it takes, and the few domain constants a client offers as choices. The web
 * app imports it; bench may too (`import type { … } from '../packages/server/src/api/index.ts'`).
 *
 * Every type comes from the routes' JSON Schemas (manage/*-schemas.ts), the objects that also validate
 * requests and shape responses, so a field renamed there fails the typecheck of every client. Times are
 * ISO 8601 strings, as in the JSON. One gap: the schemas' response types (`ResponseShape`) drop index
 * signatures, so a map (a webhook's `headers`, a profile's `traits`) is typed `{}` and its values
 * `unknown` when read.
 *
 * Blunt rule: only type-only re-exports and re-exports of pure constants belong here. The web app
 * bundles what it imports from this file at runtime and bench loads it with Node's type stripping; a
 * runtime import of a schema file, or of anything that touches Node, would pull the server into both.
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts'
import type { AudienceNode } from '../domain/audiences.ts'
import type { createTokenSchema, listTokensSchema, signInSchema } from '../manage/access-schemas.ts'
import type { listNoticesSchema, putAlertsSchema } from '../manage/alert-schemas.ts'
import type {
  AudienceView,
  createAudienceSchema,
  listAudienceMembersSchema,
  listAudiencesSchema,
  previewAudienceSchema,
  updateAudienceSchema,
} from '../manage/audience-schemas.ts'
import type { errorResponse, ResponseShape } from '../manage/common-schemas.ts'
import type {
  createComputedTraitSchema,
  listComputedTraitsSchema,
  updateComputedTraitSchema,
} from '../manage/computed-trait-schemas.ts'
import type { exportConfigSchema, planConfigSchema } from '../manage/config-schemas.ts'
import type {
  destinationSeriesSchema,
  listDeliveriesSchema,
  replayDestinationSchema,
  testDestinationSchema,
} from '../manage/delivery-schemas.ts'
import type {
  createDestinationSchema,
  listDestinationsSchema,
  listRotationsSchema,
  rotateSecretSchema,
  updateDestinationSchema,
} from '../manage/destination-schemas.ts'
import type { dryRunSchema, savedDryRunSchema } from '../manage/dry-run-schemas.ts'
import type {
  findProfileSchema,
  listProfileEventsSchema,
  searchProfilesSchema,
} from '../manage/profile-schemas.ts'
import type {
  createRegulationSchema,
  listRegulationsSchema,
  listSuppressionsSchema,
} from '../manage/regulation-schemas.ts'
import type { listReplaysSchema, startReplaySchema } from '../manage/replay-schemas.ts'
import type {
  createSourceSchema,
  listSourcesSchema,
  sourceSeriesSchema,
  updateSourceSchema,
} from '../manage/source-schemas.ts'

export type { AudienceNode, CountOperator } from '../domain/audiences.ts'
// --- Constants, re-exported from where the domain keeps them ---------------------------------------
export { COUNT_OPERATORS } from '../domain/audiences.ts'
export type {
  ComputationStatus,
  ComputedTraitKind,
  WhereCondition,
  WhereOperator,
} from '../domain/computed-traits.ts'
export { COMPUTED_TRAIT_KINDS, WHERE_OPERATORS } from '../domain/computed-traits.ts'
export type { DeliveryStatus } from '../domain/deliveries.ts'
export { DELIVERY_STATUSES } from '../domain/deliveries.ts'
export type {
  DestinationFilter,
  FilterAction,
  SecretKind,
  WebhookMethod,
} from '../domain/destinations.ts'
export {
  DEFAULT_SIGNING,
  FILTER_ACTIONS,
  GRACE_PERIOD_SECONDS,
  SECRET_KINDS,
  WEBHOOK_METHODS,
} from '../domain/destinations.ts'
export type { OperationalEventType } from '../domain/health-store.ts'
export { OPERATIONAL_EVENT_TYPES } from '../domain/health-store.ts'
export type { MessageType, StoredMessageType } from '../domain/messages.ts'
export { MESSAGE_TYPES } from '../domain/messages.ts'
export type { RegulationStatus, RegulationType } from '../domain/regulations.ts'
export { REGULATION_STATUSES, REGULATION_TYPES } from '../domain/regulations.ts'
export type { ReplayStatus } from '../domain/replays.ts'
export { REPLAY_STATUSES } from '../domain/replays.ts'
export type { TokenRole } from '../domain/tokens.ts'
export { TOKEN_ROLES } from '../domain/tokens.ts'
// --- Records --------------------------------------------------------------------------------------
export type { LiveCall } from '../ingest/live-calls.ts'
/** How the API names a field in its messages (`/settings/webhooks/0/url` → `settings.webhooks[0].url`). */
export { fieldLabel } from '../lib/json-pointer.ts'
export type { SessionView as Session, TokenView as AccessToken } from '../manage/access-schemas.ts'
export type { AlertSettingsView as AlertSettings, NoticeView as Notice } from '../manage/alert-schemas.ts'
export type { ComputedTraitView as ComputedTrait } from '../manage/computed-trait-schemas.ts'
export type {
  AttemptResultView as AttemptResult,
  AttemptView as Attempt,
  DeliveryRequestView as DeliveryRequest,
  DeliveryStatsView as DeliveryStats,
  DeliveryView as Delivery,
} from '../manage/delivery-schemas.ts'
export type {
  DeliveryPolicySettingsView as DeliveryPolicySettings,
  DestinationView as Destination,
  EndpointHealthView as EndpointHealth,
  SecretRotationView as SecretRotation,
} from '../manage/destination-schemas.ts'
export type { DryRunView as DryRunAnswer } from '../manage/dry-run-schemas.ts'
export type {
  ProfileEventView as ProfileEvent,
  ProfileIdentitiesView as ProfileIdentities,
  ProfileView as Profile,
} from '../manage/profile-schemas.ts'
export type {
  RegulationView as Regulation,
  SuppressionView as Suppression,
} from '../manage/regulation-schemas.ts'
export type { ReplayView as Replay } from '../manage/replay-schemas.ts'
export type { SourceView as Source } from '../manage/source-schemas.ts'

/**
 * An audience. Its schema leaves `definition` open (the domain checks the tree in depth and stores only
 * a tree it accepted), so this type names the tree; the field itself still comes from the schema.
 */
export type Audience = {
  [Key in keyof AudienceView]: Key extends 'definition' ? AudienceNode : AudienceView[Key]
}

// --- What single routes answer ----------------------------------------------------------------------
/** The answer of a route with the given status. */
type Answer<
  Route extends { response: Record<number, JSONSchema> },
  Status extends keyof Route['response'] = 200,
> = Route['response'][Status] extends infer Schema extends JSONSchema ? ResponseShape<Schema> : never

/** Every error: `{error: {code, message, field?}}`, `field` a JSON pointer into the request. */
export type ErrorBody = ResponseShape<typeof errorResponse>
/** POST /tokens: the token's record and, this once, the token itself. */
export type CreatedToken = Answer<typeof createTokenSchema, 201>
export type TokenList = Answer<typeof listTokensSchema>
export type SourceList = Answer<typeof listSourcesSchema>
export type SourceSeries = Answer<typeof sourceSeriesSchema>
export type DestinationList = Answer<typeof listDestinationsSchema>
/** POST /destinations (and PATCH): the destination, with `warnings` about URLs Sluice refuses to dial. */
export type SavedDestination = Answer<typeof createDestinationSchema, 201>
export type DestinationSeries = Answer<typeof destinationSeriesSchema>
/** POST /destinations/{id}/secrets/rotate: the new secret (shown this once) and the rotation. */
export type RotationAnswer = Answer<typeof rotateSecretSchema>
export type RotationList = Answer<typeof listRotationsSchema>
export type DeliveryPage = Answer<typeof listDeliveriesSchema>
export type ReplayAnswer = Answer<typeof replayDestinationSchema, 202>
/** GET /destinations/{id}/replays: the destination's replays of stored calls, newest first. */
export type ReplayList = Answer<typeof listReplaysSchema>
/** POST /destinations/{id}/test: what each URL answered. */
export type TestSendAnswer = Answer<typeof testDestinationSchema>
export type RegulationList = Answer<typeof listRegulationsSchema>
export type SuppressionList = Answer<typeof listSuppressionsSchema>
type AudienceListView = Answer<typeof listAudiencesSchema>
export type AudienceList = { [Key in keyof AudienceListView]: Audience[] }
export type AudiencePreview = Answer<typeof previewAudienceSchema>
export type ComputedTraitList = Answer<typeof listComputedTraitsSchema>
export type ProfileEventPage = Answer<typeof listProfileEventsSchema>
export type NoticeList = Answer<typeof listNoticesSchema>
export type AudienceMembersPage = Answer<typeof listAudienceMembersSchema>
export type ProfileSearchAnswer = Answer<typeof searchProfilesSchema>
/** GET /config: the configuration document (its own schema: /api/config.schema.json). */
export type ConfigDocument = Answer<typeof exportConfigSchema>
/** POST /config/plan and /config/apply: the changes, in document order. */
export type ConfigChanges = Answer<typeof planConfigSchema>

// --- What single routes take ------------------------------------------------------------------------
/** A route's body; a property with a default may be left out. */
type Body<Route extends { body: JSONSchema }> = FromSchema<
  Route['body'],
  { keepDefaultedPropertiesOptional: true }
>
/** A route's query string, as values (the client writes them into the URL). */
type Query<Route extends { querystring: JSONSchema }> = FromSchema<
  Route['querystring'],
  { keepDefaultedPropertiesOptional: true }
>

export type SignInBody = Body<typeof signInSchema>
export type CreateTokenBody = Body<typeof createTokenSchema>
export type CreateSourceBody = Body<typeof createSourceSchema>
export type UpdateSourceBody = Body<typeof updateSourceSchema>
export type CreateDestinationBody = Body<typeof createDestinationSchema>
export type UpdateDestinationBody = Body<typeof updateDestinationSchema>
export type RotateSecretBody = Body<typeof rotateSecretSchema>
/** POST /destinations/dry-run: unsaved settings over the sources' recent calls. */
export type DryRunBody = Body<typeof dryRunSchema>
/** POST /destinations/{id}/dry-run: the window over the destination's recent calls. */
export type SavedDryRunBody = Body<typeof savedDryRunSchema>
export type DeliveryQuery = Query<typeof listDeliveriesSchema>
export type ReplayQuery = Query<typeof replayDestinationSchema>
/** POST /destinations/{id}/replays: the window, sources, types, events and force of a replay of stored calls. */
export type StartReplayBody = Body<typeof startReplaySchema>
export type SeriesQuery = Query<typeof sourceSeriesSchema>
export type CreateRegulationBody = Body<typeof createRegulationSchema>
export type CreateAudienceBody = Body<typeof createAudienceSchema>
export type PreviewAudienceBody = Body<typeof previewAudienceSchema>
export type UpdateAudienceBody = Body<typeof updateAudienceSchema>
export type CreateComputedTraitBody = Body<typeof createComputedTraitSchema>
export type UpdateComputedTraitBody = Body<typeof updateComputedTraitSchema>
export type ProfileQuery = Query<typeof findProfileSchema>
export type ProfileEventQuery = Query<typeof listProfileEventsSchema>
export type AudienceMembersQuery = Query<typeof listAudienceMembersSchema>
export type ProfileSearchQuery = Query<typeof searchProfilesSchema>
export type ConfigExportQuery = Query<typeof exportConfigSchema>
export type PutAlertsBody = Body<typeof putAlertsSchema>
