// The store thread of pipeline-floor.ts's `bare-tables` mode: the least SQLite work a durable delivery
// loop that can schedule retries does, with none of Sluice's schema.
// - deliveries: id, destination, state, when due, the body to send; a partial index of the pending
//   ones by destination and due time, which any design that retries later and claims destination by
//   destination needs (recording a delivery takes it out of that index);
// - attempts: one bare row per attempt, no index;
// - a claim is a lease held in this thread's memory (a cursor over the due index, no UPDATE), which
//   is sound only for a single process;
// - recording a batch is, per delivery, one UPDATE of its state and one attempt row, then an fsynced
//   commit (synchronous=FULL) — and the next claim, answered in the same reply.
import { DatabaseSync } from 'node:sqlite'
import { parentPort, workerData } from 'node:worker_threads'
import { backlogPayload } from './backlog-messages.ts'

const { path, count } = workerData as { path: string; count: number }
const port = parentPort!
const db = new DatabaseSync(path)
db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
  CREATE TABLE deliveries (id INTEGER PRIMARY KEY, destination_id INTEGER NOT NULL,
    state INTEGER NOT NULL, next_attempt_at INTEGER NOT NULL, body TEXT NOT NULL);
  CREATE INDEX deliveries_due ON deliveries (destination_id, next_attempt_at, id) WHERE state = 0;
  CREATE TABLE attempts (delivery_id INTEGER NOT NULL, attempted_at INTEGER NOT NULL,
    status_code INTEGER, latency_ms REAL NOT NULL, excerpt TEXT);`)
const seed = db.prepare(
  'INSERT INTO deliveries (id, destination_id, state, next_attempt_at, body) VALUES (?, 1, 0, ?, ?)',
)
const seededAt = Date.now()
const iso = new Date(seededAt).toISOString()
db.exec('BEGIN')
for (let id = 1; id <= count; id++) seed.run(id, seededAt, backlogPayload(`drain-${id}`, iso))
db.exec('COMMIT')

// `LIMIT +?`, as Sluice's store writes it: with a bare `?` SQLite re-prepares the statement at every
// claim (64.6 against 34.4 µs a 24-row claim here), which is no part of the least a durable loop does.
const due = db.prepare(
  `SELECT id, body, next_attempt_at FROM deliveries
   WHERE destination_id = 1 AND state = 0 AND next_attempt_at <= ? AND (next_attempt_at, id) > (?, ?)
   ORDER BY next_attempt_at, id LIMIT +?`,
)
due.setReturnArrays(true)
const deliver = db.prepare('UPDATE deliveries SET state = 1 WHERE id = ?')
const attempt = db.prepare(
  'INSERT INTO attempts (delivery_id, attempted_at, status_code, latency_ms, excerpt) VALUES (?, ?, ?, ?, ?)',
)
const pendingCount = db.prepare('SELECT count(*) AS n FROM deliveries WHERE state = 0')
/** The leases, in memory: every due delivery up to (leasedAt, leasedId) is claimed. */
let leasedAt = 0
let leasedId = 0

function claim(limit: number): { ids: number[]; bodies: string[] } {
  const ids: number[] = []
  const bodies: string[] = []
  if (limit === 0) return { ids, bodies }
  for (const [id, body, at] of due.all(Date.now(), leasedAt, leasedId, limit) as unknown as [
    number,
    string,
    number,
  ][]) {
    ids.push(id)
    bodies.push(body)
    leasedAt = at
    leasedId = id
  }
  return { ids, bodies }
}

type Call =
  | { kind: 'claim'; limit: number }
  | { kind: 'record'; outcomes: (number | string)[]; limit: number }
  | { kind: 'pending' }
port.on('message', (call: Call) => {
  if (call.kind === 'claim') port.postMessage(claim(call.limit))
  else if (call.kind === 'pending') port.postMessage((pendingCount.get() as { n: number }).n)
  else {
    // Flat: id, attemptedAt, statusCode, latencyMs, excerpt for each outcome.
    const o = call.outcomes
    db.exec('BEGIN')
    for (let i = 0; i < o.length; i += 5) {
      deliver.run(o[i]!)
      attempt.run(o[i]!, o[i + 1]!, o[i + 2]!, o[i + 3]!, o[i + 4]!)
    }
    db.exec('COMMIT')
    port.postMessage(claim(call.limit))
  }
})
port.postMessage('ready')
