/**
 * The embedded store as the server uses it: `SqliteStore` on a worker thread (store-worker.ts)
 * behind this async proxy. node:sqlite is synchronous, so on the main thread every commit's fsync
 * and every B-tree update would stall HTTP handling and deliveries; here they run on the other core.
 * Calls are answered in order, so behaviour is exactly that of the single-threaded store.
 *
 * Every contract method is forwarded as it is (one forwarder per method of the store core's areas:
 * a new method needs no entry anywhere), except: `ingest`, whose messages cross packed (packed-messages.ts); `claimDeliveries` and
 * `recordOutcomes`, whose outcomes and claimed deliveries cross packed (packed-outcomes.ts,
 * packed-claims.ts: each message as its stored JSON text, parsed here); `batchCandidates` and
 * `claimBatches`, likewise (packed-batches.ts); `getSourceByWriteKey`, cached
 * here because every Tracking API request asks; and `watch`, answered here from the changes each
 * reply carries back.
 */
import { extname, join } from 'node:path'
import { Worker } from 'node:worker_threads'
import type {
  BatchCandidate,
  ClaimedBatch,
  ClaimedDelivery,
  ClaimRequest,
  DeliveryOutcome,
} from '../../domain/delivery-store.ts'
import type { AcceptedMessage, IngestOutcome } from '../../domain/message-store.ts'
import type { Source } from '../../domain/sources.ts'
import { Changes } from '../core/changes.ts'
import { WriteKeyCache } from '../core/write-key-cache.ts'
import { StoreUnavailableError } from '../errors.ts'
import type { Store, StoreEvent } from '../store.ts'
import { toClaimedDeliveries } from '../tables/deliveries.ts'
import { toBatchCandidates, toClaimedBatches } from '../tables/delivery-batches.ts'
import { databasePath } from './database.ts'
import { unpackCandidates, unpackClaimedBatches } from './packed-batches.ts'
import { unpackClaims } from './packed-claims.ts'
import { packMessages } from './packed-messages.ts'
import { packOutcomes } from './packed-outcomes.ts'
import type { SqliteStoreOptions } from './sqlite-store.ts'
import {
  type ForwardedMethod,
  forwardedMethods,
  type StoreCall,
  type StoreReply,
  type WorkerMethod,
  type WorkerMethods,
} from './worker-protocol.ts'

interface PendingCall {
  resolve: (value: unknown) => void
  reject: (error: Error) => void
}

// The forwarded methods are defined on the prototype by the static block below, one per method of the
// store core's areas (forwardedMethods, worker-protocol.ts) that this proxy does not answer itself.
export interface ThreadedSqliteStore extends Pick<Store, ForwardedMethod> {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the static block defines every merged method (see above).
export class ThreadedSqliteStore implements Store {
  readonly kind = 'sqlite' as const
  readonly path: string
  private readonly worker: Worker
  private readonly pending = new Map<number, PendingCall>()
  private nextId = 1
  private failure: Error | null = null
  /** What the worker committed, heard from its replies. */
  private readonly changes = new Changes()
  private readonly writeKeys = new WriteKeyCache(
    (writeKey) => this.call('getSourceByWriteKey', [writeKey]),
    this.changes,
  )

  static {
    const forwarder = <M extends ForwardedMethod>(method: M) =>
      function (this: ThreadedSqliteStore, ...args: Parameters<WorkerMethods[M]>) {
        return this.call(method, args)
      }
    for (const method of forwardedMethods()) {
      Object.defineProperty(ThreadedSqliteStore.prototype, method, {
        value: forwarder(method),
        writable: true,
        configurable: true,
      })
    }
  }

  constructor(options: SqliteStoreOptions) {
    this.path = databasePath(options.dataDir)
    // store-worker.ts beside the sources, store-worker.js in the build (dist/).
    const workerFile = `store-worker${extname(import.meta.filename)}`
    this.worker = new Worker(join(import.meta.dirname, workerFile), { workerData: options })
    this.worker.on('message', (reply: StoreReply) => {
      // Before the caller resumes: a rotated write key is already out of the cache, and the delivery
      // engine is already woken, when the write's promise resolves.
      if (reply.events) for (const event of reply.events) this.changes.heard(event)
      const call = this.pending.get(reply.id)
      if (!call) return
      this.pending.delete(reply.id)
      if ('error' in reply) call.reject(Object.assign(new Error(reply.error.message), reply.error))
      else call.resolve(reply.result)
    })
    const fail = (error: Error) => {
      this.failure = error
      for (const call of this.pending.values()) call.reject(error)
      this.pending.clear()
    }
    this.worker.on('error', (error) =>
      fail(new StoreUnavailableError(`The store worker failed: ${error.message}`, { cause: error })),
    )
    this.worker.on('exit', () => fail(new StoreUnavailableError('The store is closed.')))
    this.worker.unref() // idle, it must not keep the process alive; pending calls ref it
  }

  /** `transfer`: buffers in `args` that move to the worker instead of being copied (unusable here after). */
  private call<M extends WorkerMethod>(
    method: M,
    args: Parameters<WorkerMethods[M]>,
    transfer: ArrayBuffer[] = [],
  ): Promise<Awaited<ReturnType<WorkerMethods[M]>>> {
    if (this.failure) return Promise.reject(this.failure)
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref()
      this.pending.set(id, {
        resolve: (value) => {
          if (this.pending.size === 0) this.worker.unref()
          resolve(value as Awaited<ReturnType<WorkerMethods[M]>>)
        },
        reject: (error) => {
          if (this.pending.size === 0) this.worker.unref()
          reject(error)
        },
      })
      this.worker.postMessage({ id, method, args } as StoreCall, transfer)
    })
  }

  ingest(messages: AcceptedMessage[]): Promise<IngestOutcome> {
    const packed = packMessages(messages)
    return this.call('ingestPacked', [packed], [packed.numbers.buffer as ArrayBuffer])
  }

  async claimDeliveries(
    destinationId: string,
    limit: number,
    now: number,
    leaseMs: number,
  ): Promise<ClaimedDelivery[]> {
    const packed = await this.call('claimPacked', [{ destinationId, limit, now, leaseMs }])
    return toClaimedDeliveries(destinationId, unpackClaims(packed)[0]!)
  }

  async recordOutcomes(
    outcomes: DeliveryOutcome[],
    claims: ClaimRequest[] = [],
  ): Promise<ClaimedDelivery[][]> {
    const packed = packOutcomes(outcomes)
    const claimed = unpackClaims(
      await this.call('recordPackedOutcomes', [packed, claims], [packed.numbers.buffer as ArrayBuffer]),
    )
    return claimed.map((rows, i) => toClaimedDeliveries(claims[i]!.destinationId, rows))
  }

  async batchCandidates(destinationId: string, limit: number, now: number): Promise<BatchCandidate[]> {
    const packed = await this.call('batchCandidatesPacked', [destinationId, limit, now])
    return toBatchCandidates(destinationId, unpackCandidates(packed))
  }

  async claimBatches(
    destinationId: string,
    limit: number,
    now: number,
    leaseMs: number,
  ): Promise<ClaimedBatch[]> {
    const packed = await this.call('claimBatchesPacked', [destinationId, limit, now, leaseMs])
    return toClaimedBatches(destinationId, unpackClaimedBatches(packed))
  }

  getSourceByWriteKey(writeKey: string): Promise<Source | null> {
    return this.writeKeys.get(writeKey)
  }

  watch(listener: (event: StoreEvent) => void): Promise<() => Promise<void>> {
    return this.changes.watch(listener)
  }

  async close(): Promise<void> {
    if (this.failure) return
    const exited = new Promise((resolve) => this.worker.once('exit', resolve))
    await this.call('close', [])
    this.worker.ref() // until the worker has closed the database and exited
    await exited
  }
}
