/**
 * The messages between ThreadedSqliteStore (main thread) and store-worker.ts (the store thread). Kept
 * apart from both: the worker module runs on import, and the main thread needs the method list.
 */

import type { ClaimRequest } from '../../domain/delivery-store.ts'
import type { IngestOutcome } from '../../domain/message-store.ts'
import type { ChangeEvent } from '../core/changes.ts'
import { type AreaMethod, areaMethods } from '../core/store-core.ts'
import type { Store } from '../store.ts'
import type { PackedMessages } from './packed-messages.ts'
import type { Packed } from './packed-text.ts'

/**
 * What the worker answers: the contract, with ingest's messages, delivery outcomes, claimed
 * deliveries, batch candidates and claimed batches packed for the trip (packed-messages.ts,
 * packed-outcomes.ts, packed-claims.ts, packed-batches.ts).
 */
export interface WorkerMethods extends Omit<Store, 'kind' | 'watch' | 'ingest'> {
  ingestPacked(packed: PackedMessages): Promise<IngestOutcome>
  /** `claimDeliveries`, the claimed rows packed (packed-claims.ts). */
  claimPacked(claim: ClaimRequest): Promise<Packed>
  /** `recordOutcomes`, its outcomes and its claimed rows packed (packed-outcomes.ts, packed-claims.ts). */
  recordPackedOutcomes(packed: Packed, claims: ClaimRequest[]): Promise<Packed>
  /** `batchCandidates`, the rows packed (packed-batches.ts). */
  batchCandidatesPacked(destinationId: string, limit: number, now: number): Promise<Packed>
  /** `claimBatches`, the batches and their members packed (packed-batches.ts). */
  claimBatchesPacked(destinationId: string, limit: number, now: number, leaseMs: number): Promise<Packed>
}
export type WorkerMethod = keyof WorkerMethods

/** Contract methods ThreadedSqliteStore answers itself (packing their data, or caching). */
export const LOCAL_METHODS = [
  'ingest',
  'claimDeliveries',
  'recordOutcomes',
  'batchCandidates',
  'claimBatches',
  'getSourceByWriteKey',
] as const satisfies readonly AreaMethod[]

type LocalMethod = (typeof LOCAL_METHODS)[number]

/** Contract methods the main thread passes to the worker as they are. */
export type ForwardedMethod = Exclude<AreaMethod, LocalMethod> | 'migrate' | 'ping'

/**
 * The same, as a value the proxy builds its methods from: derived from the store core's areas (every
 * method an area answers), so a method added to the contract is forwarded without being listed here.
 */
export function forwardedMethods(): ForwardedMethod[] {
  const local: readonly string[] = LOCAL_METHODS
  return [
    'migrate',
    'ping',
    ...areaMethods().filter((method): method is Exclude<AreaMethod, LocalMethod> => !local.includes(method)),
  ]
}

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
  | { id: number; error: { name: string; message: string; code?: string; regulationId?: string } }
) & { events?: ChangeEvent[] }
