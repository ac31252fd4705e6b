/**
 * The messages between ThreadedSqliteStore (main thread) and store-worker.ts (the store thread). Kept
 * apart from both: the worker module runs on import, and the main thread needs the method list.
 */
import type { ChangeEvent } from '../core/changes.ts'
import type { ClaimRequest, IngestOutcome, Store } from '../store.ts'
import type { PackedMessages } from './packed-messages.ts'
import type { Packed } from './packed-text.ts'

/**
 * What the worker answers: the contract, with ingest's messages, delivery outcomes and claimed
 * deliveries packed for the trip (packed-messages.ts, packed-outcomes.ts, packed-claims.ts).
 */
export interface WorkerMethods extends Omit<Store, 'kind' | 'watch' | 'ingest'> {
  ingestPacked(packed: PackedMessages): Promise<IngestOutcome>
  /** `claimDeliveries`, the claimed rows packed (packed-claims.ts). */
  claimPacked(claim: ClaimRequest): Promise<Packed>
  /** `recordOutcomes`, its outcomes and its claimed rows packed (packed-outcomes.ts, packed-claims.ts). */
  recordPackedOutcomes(packed: Packed, claims: ClaimRequest[]): Promise<Packed>
}
export type WorkerMethod = keyof WorkerMethods

/** Contract methods the main thread passes to the worker as they are. */
export type ForwardedMethod = Exclude<
  keyof Store,
  'kind' | 'watch' | 'ingest' | 'getSourceByWriteKey' | 'close' | 'claimDeliveries' | 'recordOutcomes'
>

/**
 * The same, as a value the proxy builds its methods from. A method added to the contract does not
 * compile here until it is listed (or handled by the proxy itself): it cannot be forgotten.
 */
export const FORWARDED_METHODS = {
  migrate: true,
  ping: true,
  createSource: true,
  listSources: true,
  getSource: true,
  updateSource: true,
  deleteSource: true,
  getSourceStats: true,
  countRejected: true,
  createDestination: true,
  listDestinations: true,
  getDestination: true,
  updateDestination: true,
  deleteDestination: true,
  getMessage: true,
  countMessages: true,
  countDeliveries: true,
  releaseClaims: true,
  nextDueAt: true,
  listDeliveries: true,
  getDelivery: true,
  replayDeliveries: true,
  deliveryStats: true,
  deliveryBacklog: true,
  rollUpDeliveries: true,
  deliveryMinutes: true,
  sourceMinutes: true,
  createToken: true,
  listTokens: true,
  getToken: true,
  findTokenByHash: true,
  touchToken: true,
  deleteToken: true,
  consumeIntoProfiles: true,
  getProfile: true,
  findProfile: true,
  listProfileEvents: true,
  eraseProfilesOfUsers: true,
  createComputedTrait: true,
  listComputedTraits: true,
  getComputedTrait: true,
  updateComputedTrait: true,
  deleteComputedTrait: true,
  createAudience: true,
  listAudiences: true,
  getAudience: true,
  updateAudience: true,
  deleteAudience: true,
  computationSize: true,
  previewAudience: true,
  evaluateComputations: true,
  queueWindowEdges: true,
  sweep: true,
  createRegulation: true,
  getRegulation: true,
  listRegulations: true,
  listSuppressions: true,
  privacyVersion: true,
  recentErasures: true,
  eraseProfilesOfDeletions: true,
  eraseNext: true,
  settleRegulations: true,
  countSuppressed: true,
} as const satisfies Record<ForwardedMethod, true>

/** One call: a discriminated union, so that each method's arguments are typed on both sides. */
export type StoreCall = {
  [M in WorkerMethod]: { id: number; method: M; args: Parameters<WorkerMethods[M]> }
}[WorkerMethod]

/**
 * The answer to one call, with the changes the call committed (if any): they ride on the reply, so the
 * main thread's listeners hear them before the caller's promise resolves, at no extra message.
 */
export type StoreReply = (
  | { id: number; result: unknown }
  | { id: number; error: { name: string; message: string; code?: string } }
) & { events?: ChangeEvent[] }
