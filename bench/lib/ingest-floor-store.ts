// The store thread of ingest-floor-server.ts: one table of calls with a unique dedupe index, each
// group of requests inserted and committed in one fsynced transaction (WAL, synchronous=FULL), then
// acknowledged to the main thread, which answers the group's requests.
import { DatabaseSync } from 'node:sqlite'
import { parentPort, workerData } from 'node:worker_threads'

const { path } = workerData as { path: string }
const port = parentPort!
const db = new DatabaseSync(path)
db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
  CREATE TABLE IF NOT EXISTS calls (id INTEGER PRIMARY KEY, source_id TEXT NOT NULL,
    message_id TEXT NOT NULL, received_at INTEGER NOT NULL, payload TEXT NOT NULL);
  CREATE UNIQUE INDEX IF NOT EXISTS calls_dedupe ON calls (source_id, message_id);`)
// A repeated messageId is a duplicate: kept once, acknowledged all the same.
const insert = db.prepare(
  'INSERT INTO calls (source_id, message_id, received_at, payload) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
)

port.on('message', (packed: string) => {
  db.exec('BEGIN')
  for (const request of packed.split('\u0003')) {
    if (request === '') continue
    const [receivedAt, sourceId, rows = ''] = request.split('\u0002')
    const at = Number(receivedAt)
    for (const row of rows.split('\u0001')) {
      if (row === '') continue
      const separator = row.indexOf('\u0000')
      insert.run(sourceId!, row.slice(0, separator), at, row.slice(separator + 1))
    }
  }
  db.exec('COMMIT')
  port.postMessage(null)
})
port.postMessage('ready')
