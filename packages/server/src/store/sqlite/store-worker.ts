/**
 * The worker-thread side of ThreadedSqliteStore: owns the SqliteStore (and so the only write
 * connection) and answers calls in arrival order, one at a time — the same serial semantics as a
 * single-threaded SQLite, without ever blocking the server's event loop — except that a long call
 * made of chunks lets the calls that arrived meanwhile run between its chunks (`yieldTurn`). The
 * changes a call commits travel back on its reply.
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

/** Calls not answered yet, in arrival order. */
const waiting: StoreCall[] = []
let draining = false

async function respond(call: StoreCall): Promise<void> {
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
}

port.on('message', (call: StoreCall) => {
  waiting.push(call)
  if (draining) return
  draining = true
  void (async () => {
    while (waiting.length > 0) await respond(waiting.shift()!)
    draining = false
  })()
})

/**
 * A long call that works in chunks, each committed by itself (the retention sweep), gives the calls
 * that arrived meanwhile their turn between two chunks, so ingest and deliveries are not held up for
 * the whole of it. Those calls, not later ones (the long call always moves on), and never `close`,
 * which waits for it.
 */
store.yieldTurn = async () => {
  // The calls posted meanwhile are only received once the event loop turns (the chunks are synchronous).
  await new Promise((resolve) => setImmediate(resolve))
  const arrived = waiting.length
  for (let i = 0; i < arrived && waiting.length > 0 && waiting[0]!.method !== 'close'; i++) {
    await respond(waiting.shift()!)
  }
}
