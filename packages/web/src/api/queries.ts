/**
 * Every call the web app makes to the management API, typed with the server's own API types: the query
 * keys, the reads (as TanStack Query options, which pages extend with their refresh policy) and the
 * changes. A list's key starts its items' keys, so invalidating a list refreshes its items too.
 */
import type {
  Audience,
  AudienceList,
  AudienceMembersPage,
  AudiencePreview,
  ComputedTrait,
  ComputedTraitList,
  CreateAudienceBody,
  CreateComputedTraitBody,
  CreateDestinationBody,
  CreatedToken,
  CreateRegulationBody,
  CreateSourceBody,
  CreateTokenBody,
  Delivery,
  DeliveryPage,
  DeliveryQuery,
  DeliveryRequest,
  Destination,
  DestinationList,
  DestinationSeries,
  DryRunAnswer,
  DryRunBody,
  NoticeList,
  PreviewAudienceBody,
  Profile,
  ProfileEventPage,
  ProfileQuery,
  ProfileSearchAnswer,
  Regulation,
  RegulationList,
  Replay,
  ReplayAnswer,
  ReplayList,
  ReplayQuery,
  RotateSecretBody,
  RotationAnswer,
  RotationList,
  SavedDestination,
  Session,
  SignInBody,
  Source,
  SourceList,
  SourceSeries,
  StartReplayBody,
  SuppressionList,
  TestSendAnswer,
  TokenList,
  UpdateAudienceBody,
  UpdateComputedTraitBody,
  UpdateDestinationBody,
  UpdateSourceBody,
} from '@sluice/server/api'
import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query'
import { get, queryString, send } from './client.ts'

export const keys = {
  session: ['session'],
  sources: ['sources'],
  source: (id: string) => ['sources', id],
  destinations: ['destinations'],
  destination: (id: string) => ['destinations', id],
  /** A destination's secret rotations (times only). */
  rotations: (id: string) => ['destinations', id, 'rotations'],
  /** Every page and filter of one destination's deliveries. */
  deliveries: (destinationId: string) => ['deliveries', destinationId],
  deliveryRequest: (deliveryId: number) => ['delivery-request', deliveryId],
  /** A destination's replays of stored calls. */
  replays: (destinationId: string) => ['replays', destinationId],
  series: (path: string, range: SeriesRange) => ['series', path, range.label],
  tokens: ['tokens'],
  notices: ['notices'],
  regulations: ['regulations'],
  suppressions: ['suppressions'],
  audiences: ['audiences'],
  audience: (id: string) => ['audiences', id],
  audienceMembers: (id: string) => ['audiences', id, 'members'],
  computedTraits: ['computed-traits'],
  profile: (lookup: ProfileQuery) => ['profile', lookup],
  profileSearch: (text: string) => ['profile-search', text],
  profileEvents: (profileId: string) => ['profile-events', profileId],
} as const

/** A chart's time range: the last `spanMs`, a point every `stepSeconds`. */
export interface SeriesRange {
  label: string
  spanMs: number
  stepSeconds: number
}

/** A `…/stats/series` endpoint's points over the range ending now. */
function seriesOf<Series>(path: string, range: SeriesRange) {
  return queryOptions({
    queryKey: keys.series(path, range),
    queryFn: () => {
      const to = Date.now()
      const window = {
        from: new Date(to - range.spanMs).toISOString(),
        to: new Date(to).toISOString(),
        step: range.stepSeconds,
      }
      return get<Series>(`${path}/stats/series${queryString(window)}`)
    },
  })
}

export const queries = {
  session: () => queryOptions({ queryKey: keys.session, queryFn: () => get<Session>('/session') }),
  sources: () => queryOptions({ queryKey: keys.sources, queryFn: () => get<SourceList>('/sources') }),
  source: (id: string) =>
    queryOptions({ queryKey: keys.source(id), queryFn: () => get<Source>(`/sources/${id}`) }),
  sourceSeries: (id: string, range: SeriesRange) => seriesOf<SourceSeries>(`/sources/${id}`, range),
  destinations: () =>
    queryOptions({ queryKey: keys.destinations, queryFn: () => get<DestinationList>('/destinations') }),
  destination: (id: string) =>
    queryOptions({ queryKey: keys.destination(id), queryFn: () => get<Destination>(`/destinations/${id}`) }),
  destinationSeries: (id: string, range: SeriesRange) =>
    seriesOf<DestinationSeries>(`/destinations/${id}`, range),
  rotations: (id: string) =>
    queryOptions({
      queryKey: keys.rotations(id),
      queryFn: () => get<RotationList>(`/destinations/${id}/secrets/rotations`),
    }),
  deliveries: (destinationId: string, query: DeliveryQuery) => {
    const search = queryString(query)
    return queryOptions({
      queryKey: [...keys.deliveries(destinationId), search],
      queryFn: () => get<DeliveryPage>(`/destinations/${destinationId}/deliveries${search}`),
    })
  },
  deliveryRequest: (deliveryId: number) =>
    queryOptions({
      queryKey: keys.deliveryRequest(deliveryId),
      queryFn: () => get<DeliveryRequest>(`/deliveries/${deliveryId}/request`),
    }),
  replays: (destinationId: string) =>
    queryOptions({
      queryKey: keys.replays(destinationId),
      queryFn: () => get<ReplayList>(`/destinations/${destinationId}/replays`),
    }),
  tokens: () => queryOptions({ queryKey: keys.tokens, queryFn: () => get<TokenList>('/tokens') }),
  /** The most recent operational events (failing, disabled and recovered URLs, dead letters, finished requests). */
  notices: (limit: number) =>
    queryOptions({
      queryKey: [...keys.notices, limit],
      queryFn: () => get<NoticeList>(`/notices${queryString({ limit })}`),
    }),
  regulations: () =>
    queryOptions({ queryKey: keys.regulations, queryFn: () => get<RegulationList>('/regulations') }),
  suppressions: () =>
    queryOptions({ queryKey: keys.suppressions, queryFn: () => get<SuppressionList>('/suppressions') }),
  audiences: () => queryOptions({ queryKey: keys.audiences, queryFn: () => get<AudienceList>('/audiences') }),
  audience: (id: string) =>
    queryOptions({ queryKey: keys.audience(id), queryFn: () => get<Audience>(`/audiences/${id}`) }),
  /** An audience's members, `limit` a page, by profile id. */
  audienceMembers: (id: string, limit: number) =>
    infiniteQueryOptions({
      queryKey: keys.audienceMembers(id),
      queryFn: ({ pageParam }) =>
        get<AudienceMembersPage>(
          `/audiences/${id}/members${queryString({ limit, after: pageParam ?? undefined })}`,
        ),
      initialPageParam: null as string | null,
      getNextPageParam: (last) => last.nextCursor,
    }),
  computedTraits: () =>
    queryOptions({
      queryKey: keys.computedTraits,
      queryFn: () => get<ComputedTraitList>('/computed-traits'),
    }),
  profile: (lookup: ProfileQuery) =>
    queryOptions({
      queryKey: keys.profile(lookup),
      queryFn: () => get<Profile>(`/profiles${queryString(lookup)}`),
    }),
  profileSearch: (text: string) =>
    queryOptions({
      queryKey: keys.profileSearch(text),
      queryFn: () => get<ProfileSearchAnswer>(`/profiles/search${queryString({ q: text })}`),
    }),
  /** A profile's calls, newest first, `limit` a page. */
  profileEvents: (profileId: string, limit: number) =>
    infiniteQueryOptions({
      queryKey: keys.profileEvents(profileId),
      queryFn: ({ pageParam }) =>
        get<ProfileEventPage>(
          `/profiles/${profileId}/events${queryString({ limit, before: pageParam ?? undefined })}`,
        ),
      initialPageParam: null as number | null,
      getNextPageParam: (last) => last.nextCursor,
    }),
}

export const changes = {
  signIn: (body: SignInBody) => send<Session>('POST', '/session', body),
  signOut: () => send<void>('DELETE', '/session'),
  createSource: (body: CreateSourceBody) => send<Source>('POST', '/sources', body),
  rotateWriteKey: (id: string) => send<Source>('POST', `/sources/${id}/rotate-write-key`),
  updateSource: (id: string, body: UpdateSourceBody) => send<Source>('PATCH', `/sources/${id}`, body),
  deleteSource: (id: string) => send<void>('DELETE', `/sources/${id}`),
  createDestination: (body: CreateDestinationBody) => send<SavedDestination>('POST', '/destinations', body),
  updateDestination: (id: string, body: UpdateDestinationBody) =>
    send<SavedDestination>('PATCH', `/destinations/${id}`, body),
  deleteDestination: (id: string) => send<void>('DELETE', `/destinations/${id}`),
  /** Unsaved settings over the sources' recent calls: what would be sent; nothing is. */
  dryRun: (body: DryRunBody) => send<DryRunAnswer>('POST', '/destinations/dry-run', body),
  /** Enables a disabled URL again (`index` from 0 in the destination's webhooks). */
  enableUrl: (id: string, index: number) =>
    send<Destination>('POST', `/destinations/${id}/urls/${index}/enable`),
  rotateSecret: (destinationId: string, body: RotateSecretBody) =>
    send<RotationAnswer>('POST', `/destinations/${destinationId}/secrets/rotate`, body),
  sendTestEvent: (destinationId: string) =>
    send<TestSendAnswer>('POST', `/destinations/${destinationId}/test`),
  replayDeliveries: (destinationId: string, query: ReplayQuery) =>
    send<ReplayAnswer>('POST', `/destinations/${destinationId}/replay${queryString(query)}`),
  /** Stored calls of a window sent to the destination again (a replay that runs in the background). */
  startReplay: (destinationId: string, body: StartReplayBody) =>
    send<Replay>('POST', `/destinations/${destinationId}/replays`, body),
  /** Answers once nothing more of the replay can be sent. */
  cancelReplay: (destinationId: string, replayId: string) =>
    send<Replay>('DELETE', `/destinations/${destinationId}/replays/${replayId}`),
  replayDelivery: (deliveryId: number) => send<Delivery>('POST', `/deliveries/${deliveryId}/replay`),
  createToken: (body: CreateTokenBody) => send<CreatedToken>('POST', '/tokens', body),
  revokeToken: (id: string) => send<void>('DELETE', `/tokens/${id}`),
  createRegulation: (body: CreateRegulationBody) => send<Regulation>('POST', '/regulations', body),
  previewAudience: (body: PreviewAudienceBody) => send<AudiencePreview>('POST', '/audiences/preview', body),
  createAudience: (body: CreateAudienceBody) => send<Audience>('POST', '/audiences', body),
  updateAudience: (id: string, body: UpdateAudienceBody) => send<Audience>('PATCH', `/audiences/${id}`, body),
  deleteAudience: (id: string) => send<void>('DELETE', `/audiences/${id}`),
  createComputedTrait: (body: CreateComputedTraitBody) =>
    send<ComputedTrait>('POST', '/computed-traits', body),
  updateComputedTrait: (id: string, body: UpdateComputedTraitBody) =>
    send<ComputedTrait>('PATCH', `/computed-traits/${id}`, body),
  deleteComputedTrait: (id: string) => send<void>('DELETE', `/computed-traits/${id}`),
}
