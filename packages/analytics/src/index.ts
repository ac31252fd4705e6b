export { Analytics, type CloseOptions } from './app/analytics.ts'
export type { AnalyticsOptions } from './app/settings.ts'
export type {
  AliasParams,
  AnalyticsEvents,
  AnalyticsStats,
  CommonFields,
  DeliveredEvent,
  DroppedEvent,
  FailedEvent,
  GroupParams,
  IdentifyParams,
  Identity,
  Integrations,
  MessageType,
  PageParams,
  RetryEvent,
  ScreenParams,
  TrackParams,
} from './app/types.ts'
export { ClosedError, DeliveryError, type DeliveryErrorKind, ValidationError } from './lib/errors.ts'
export type { FetchInit, FetchLike, FetchResponse } from './lib/fetch.ts'
export { LIBRARY } from './version.ts'
