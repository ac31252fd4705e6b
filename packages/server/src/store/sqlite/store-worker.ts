/**
 * The worker-thread side of ThreadedSqliteStore: owns the SqliteStore (and so the only write
 * connection) and answers calls in arrival order, one at a time — the same serial semantics as a
 * single-threaded SQLite, without ever blocking the server's event loop.
 */
import { parentPort, workerData } from 'node:worker_threads'
import type { Store } from '../store.ts'
import { type PackedMessages, unpackMessages } from './packed-messages.ts'
import { SqliteStore, type SqliteStoreOptions } from './sqlite-store.ts'

/** The methods the worker answers (everything but the kind tag and the multi-process watch hook). */
export type StoreMethod = Exclude<keyof Store, 'kind' | 'watch'>

/** `ingestPacked` is `ingest` with its messages packed for the trip (packed-messages.ts). */
export type WorkerMethod = StoreMethod | 'ingestPacked'

export interface StoreCall {
  id: number
  method: WorkerMethod
  args: unknown[]
}

export type StoreReply =
  | { id: number; result: unknown }
  | { id: number; error: { name: string; message: string; code?: string } }

const store = new SqliteStore(workerData as SqliteStoreOptions)
const port = parentPort!
let queue = Promise.resolve()

port.on('message', (call: StoreCall) => {
  queue = queue.then(async () => {
    try {
      const result =
        call.method === 'ingestPacked'
          ? await store.ingest(unpackMessages(call.args[0] as PackedMessages), call.args[1] as number)
          : await (store[call.method] as (...args: unknown[]) => Promise<unknown>).apply(store, call.args)
      port.postMessage({ id: call.id, result } satisfies StoreReply)
    } catch (error) {
      const { name, message, code } = error as NodeJS.ErrnoException
      port.postMessage({
        id: call.id,
        error: { name, message, ...(code ? { code } : {}) },
      } satisfies StoreReply)
    }
    if (call.method === 'close') port.close()
  })
})
