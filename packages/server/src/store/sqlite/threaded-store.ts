/**
 * The embedded store as the server uses it: `SqliteStore` on a worker thread (store-worker.ts)
 * behind this async proxy. node:sqlite is synchronous, so on the main thread every commit's fsync
 * and every B-tree update would stall HTTP handling and deliveries; here they run on the other core.
 * Calls are answered in order, so behaviour is exactly that of the single-threaded store.
 *
 * Write keys are looked up on every Tracking API request, so sources found by write key are cached
 * briefly; any change to a source through this store clears the cache at once (key rotation and
 * disabling take effect immediately).
 */
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { StoreUnavailableError } from '../errors.ts'
import type {
  AcceptedMessage,
  ClaimedDelivery,
  Delivery,
  DeliveryOutcome,
  DeliveryStats,
  DeliveryStatus,
  Destination,
  DestinationPatch,
  IngestOutcome,
  NewDestination,
  NewSource,
  Source,
  SourcePatch,
  SourceStats,
  Store,
  StoredMessage,
} from '../store.ts'
import { packMessages } from './packed-messages.ts'
import type { SqliteStoreOptions } from './sqlite-store.ts'
import type { StoreCall, StoreMethod, StoreReply, WorkerMethod } from './store-worker.ts'

/** How long a source found by write key is trusted without asking the store again. */
const WRITE_KEY_CACHE_MS = 2_000

interface PendingCall {
  resolve: (value: unknown) => void
  reject: (error: Error) => void
}

export class ThreadedSqliteStore implements Store {
  readonly kind = 'sqlite' as const
  readonly path: string
  private readonly worker: Worker
  private readonly pending = new Map<number, PendingCall>()
  private nextId = 1
  private failure: Error | null = null
  private readonly sourcesByKey = new Map<string, { source: Source; until: number }>()

  constructor(options: SqliteStoreOptions) {
    this.path = join(options.dataDir, 'sluice.db')
    this.worker = new Worker(join(import.meta.dirname, 'store-worker.ts'), { workerData: options })
    this.worker.on('message', (reply: StoreReply) => {
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

  private call<T>(method: StoreMethod, ...args: unknown[]): Promise<T> {
    return this.callTransferring(method, [], ...args)
  }

  /** `transfer`: buffers in `args` that move to the worker instead of being copied (unusable here after). */
  private callTransferring<T>(method: WorkerMethod, transfer: ArrayBuffer[], ...args: unknown[]): Promise<T> {
    if (this.failure) return Promise.reject(this.failure)
    const id = this.nextId++
    return new Promise<T>((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref()
      this.pending.set(id, {
        resolve: (value) => {
          if (this.pending.size === 0) this.worker.unref()
          resolve(value as T)
        },
        reject: (error) => {
          if (this.pending.size === 0) this.worker.unref()
          reject(error)
        },
      })
      this.worker.postMessage({ id, method, args } satisfies StoreCall, transfer)
    })
  }

  migrate(): Promise<void> {
    return this.call('migrate')
  }
  ping(): Promise<boolean> {
    return this.call('ping')
  }
  async close(): Promise<void> {
    if (this.failure) return
    const exited = new Promise((resolve) => this.worker.once('exit', resolve))
    await this.call('close')
    this.worker.ref() // until the worker has closed the database and exited
    await exited
  }

  createSource(input: NewSource): Promise<Source> {
    return this.call('createSource', input)
  }
  listSources(): Promise<Source[]> {
    return this.call('listSources')
  }
  getSource(id: string): Promise<Source | null> {
    return this.call('getSource', id)
  }
  async getSourceByWriteKey(writeKey: string): Promise<Source | null> {
    const cached = this.sourcesByKey.get(writeKey)
    if (cached && cached.until > Date.now()) return cached.source
    const source = await this.call<Source | null>('getSourceByWriteKey', writeKey)
    if (source) this.sourcesByKey.set(writeKey, { source, until: Date.now() + WRITE_KEY_CACHE_MS })
    else this.sourcesByKey.delete(writeKey)
    return source
  }
  updateSource(id: string, patch: SourcePatch): Promise<Source | null> {
    this.sourcesByKey.clear()
    return this.call('updateSource', id, patch)
  }
  deleteSource(id: string): Promise<boolean> {
    this.sourcesByKey.clear()
    return this.call('deleteSource', id)
  }
  getSourceStats(id: string): Promise<SourceStats> {
    return this.call('getSourceStats', id)
  }
  countRejected(sourceId: string, count: number): Promise<void> {
    return this.call('countRejected', sourceId, count)
  }

  createDestination(input: NewDestination): Promise<Destination> {
    return this.call('createDestination', input)
  }
  listDestinations(): Promise<Destination[]> {
    return this.call('listDestinations')
  }
  getDestination(id: string): Promise<Destination | null> {
    return this.call('getDestination', id)
  }
  updateDestination(id: string, patch: DestinationPatch): Promise<Destination | null> {
    return this.call('updateDestination', id, patch)
  }
  deleteDestination(id: string): Promise<boolean> {
    return this.call('deleteDestination', id)
  }

  ingest(messages: AcceptedMessage[], dedupeWindowMs: number): Promise<IngestOutcome> {
    const packed = packMessages(messages)
    return this.callTransferring(
      'ingestPacked',
      [packed.numbers.buffer as ArrayBuffer],
      packed,
      dedupeWindowMs,
    )
  }
  getMessage(sourceId: string, messageId: string): Promise<StoredMessage | null> {
    return this.call('getMessage', sourceId, messageId)
  }
  countMessages(sourceId?: string): Promise<number> {
    return this.call('countMessages', sourceId)
  }
  countDeliveries(filter?: { destinationId?: string; status?: DeliveryStatus }): Promise<number> {
    return this.call('countDeliveries', filter)
  }

  claimDeliveries(
    destinationId: string,
    limit: number,
    now: number,
    leaseMs: number,
  ): Promise<ClaimedDelivery[]> {
    return this.call('claimDeliveries', destinationId, limit, now, leaseMs)
  }
  recordOutcomes(outcomes: DeliveryOutcome[]): Promise<void> {
    return this.call('recordOutcomes', outcomes)
  }
  releaseClaims(deliveryIds: number[]): Promise<void> {
    return this.call('releaseClaims', deliveryIds)
  }
  nextDueAt(destinationId: string, now: number): Promise<number | null> {
    return this.call('nextDueAt', destinationId, now)
  }
  listDeliveries(
    destinationId: string,
    filter: { status?: DeliveryStatus; limit: number; before?: number },
  ): Promise<Delivery[]> {
    return this.call('listDeliveries', destinationId, filter)
  }
  getDelivery(id: number): Promise<Delivery | null> {
    return this.call('getDelivery', id)
  }
  replayDeliveries(
    filter: { ids: number[] } | { destinationId: string; status: 'failed' | 'delivered'; since?: number },
    now: number,
  ): Promise<number> {
    return this.call('replayDeliveries', filter, now)
  }
  deliveryStats(destinationId: string): Promise<DeliveryStats> {
    return this.call('deliveryStats', destinationId)
  }

  sweep(olderThan: number): Promise<{ messages: number }> {
    return this.call('sweep', olderThan)
  }
}
