/**
 * The worker-thread side of ThreadedSqliteStore: owns the SqliteStore (and so the only write
 * connection) and answers calls in arrival order, one at a time — the same serial semantics as a
 * single-threaded SQLite, without ever blocking the server's event loop. The changes a call commits
 * travel back on its reply.
 */
import { parentPort, workerData } from 'node:worker_threads'
import type { ChangeEvent } from '../core/changes.ts'
import { packCandidates, packClaimedBatches } from './packed-batches.ts'
import { packClaims } from './packed-claims.ts'
import { unpackMessages } from './packed-messages.ts'
import { unpackOutcomes } from './packed-outcomes.ts'
import { SqliteStore, type SqliteStoreOptions } from './sqlite-store.ts'
import type { StoreCall, StoreReply } from './worker-protocol.ts'

const store = new SqliteStore(workerData as SqliteStoreOptions)
const port = parentPort!
/** Changes committed by the call being answered (calls run one at a time). */
let events: ChangeEvent[] = []
store.changes.subscribe((event) => {
  if (!events.includes(event)) events.push(event)
})

function answer(call: StoreCall): Promise<unknown> {
  if (call.method === 'ingestPacked') return store.ingest(unpackMessages(call.args[0]))
  if (call.method === 'claimPacked') return store.claimRows(call.args[0]).then((rows) => packClaims([rows]))
  if (call.method === 'recordPackedOutcomes') {
    const [outcomes, claims] = call.args
    return store.recordOutcomesClaimingRows(unpackOutcomes(outcomes), claims).then(packClaims)
  }
  if (call.method === 'batchCandidatesPacked')
    return store.batchCandidateRows(...call.args).then(packCandidates)
  if (call.method === 'claimBatchesPacked') return store.claimBatchRows(...call.args).then(packClaimedBatches)
  const method = store[call.method] as (...args: unknown[]) => Promise<unknown>
  return method.apply(store, call.args)
}

let queue = Promise.resolve()
port.on('message', (call: StoreCall) => {
  queue = queue.then(async () => {
    let reply: StoreReply
    try {
      reply = { id: call.id, result: await answer(call) }
    } catch (error) {
      const { name, message, code, regulationId } = error as NodeJS.ErrnoException & { regulationId?: string }
      reply = {
        id: call.id,
        error: { name, message, ...(code ? { code } : {}), ...(regulationId ? { regulationId } : {}) },
      }
    }
    if (events.length > 0) {
      reply.events = events
      events = []
    }
    port.postMessage(reply)
    if (call.method === 'close') port.close()
  })
})
