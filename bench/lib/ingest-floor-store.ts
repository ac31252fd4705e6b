// The store thread of ingest-floor-server.ts: one table of calls with a unique dedupe index, each
// group of requests inserted and committed in one fsynced transaction (WAL, synchronous=FULL), then
// acknowledged to the main thread, which answers the group's requests.
// With `profiles`, the same transaction also keeps a profile per user: each new call's profile event
// (its profile key, event, time and properties) in a table indexed by profile, and one row per profile
// (first and last seen), upserted once per commit for each profile the commit touched.
import { DatabaseSync } from 'node:sqlite'
import { parentPort, workerData } from 'node:worker_threads'

const { path, profiles } = workerData as { path: string; profiles: boolean }
const port = parentPort!
const db = new DatabaseSync(path)
db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
  CREATE TABLE IF NOT EXISTS calls (id INTEGER PRIMARY KEY, source_id TEXT NOT NULL,
    message_id TEXT NOT NULL, received_at INTEGER NOT NULL, payload TEXT NOT NULL);
  CREATE UNIQUE INDEX IF NOT EXISTS calls_dedupe ON calls (source_id, message_id);`)
if (profiles)
  db.exec(`CREATE TABLE IF NOT EXISTS profiles (key TEXT PRIMARY KEY, first_seen_at INTEGER NOT NULL,
      last_seen_at INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS profile_events (call_id INTEGER PRIMARY KEY, profile_key TEXT NOT NULL,
      event TEXT, occurred_at INTEGER NOT NULL, properties TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS profile_events_by_profile ON profile_events (profile_key, call_id);`)
// A repeated messageId is a duplicate: kept once, acknowledged all the same.
const insert = db.prepare(
  'INSERT INTO calls (source_id, message_id, received_at, payload) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
)
const insertEvent = profiles
  ? db.prepare(
      'INSERT INTO profile_events (call_id, profile_key, event, occurred_at, properties) VALUES (?, ?, ?, ?, ?)',
    )
  : null
const upsertProfile = profiles
  ? db.prepare(
      `INSERT INTO profiles (key, first_seen_at, last_seen_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE
       SET first_seen_at = min(first_seen_at, excluded.first_seen_at), last_seen_at = max(last_seen_at, excluded.last_seen_at)`,
    )
  : null

port.on('message', (packed: string) => {
  const seen = new Map<string, [number, number]>()
  db.exec('BEGIN')
  for (const request of packed.split('\u0003')) {
    if (request === '') continue
    const [receivedAt, sourceId, rows = ''] = request.split('\u0002')
    const at = Number(receivedAt)
    for (const row of rows.split('\u0001')) {
      if (row === '') continue
      const [messageId = '', payload = '', key = '', event = '', occurred = '', properties = ''] =
        row.split('\u0000')
      const { changes, lastInsertRowid } = insert.run(sourceId!, messageId, at, payload)
      if (insertEvent === null || changes === 0) continue
      const occurredAt = Number(occurred)
      insertEvent.run(lastInsertRowid, key, event === '' ? null : event, occurredAt, properties)
      const span = seen.get(key)
      if (span) seen.set(key, [Math.min(span[0], occurredAt), Math.max(span[1], occurredAt)])
      else seen.set(key, [occurredAt, occurredAt])
    }
  }
  for (const [key, [first, last]] of seen) upsertProfile!.run(key, first, last)
  db.exec('COMMIT')
  port.postMessage(null)
})
port.postMessage('ready')
