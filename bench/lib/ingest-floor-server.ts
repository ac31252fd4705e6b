// The bare durable ingest floor: the least a durable Segment-compatible ingest can do, with no Sluice
// code at all. It is what Sluice's ingest is measured against (bench/ingest.ts), so the distance
// between the two is Sluice's own code, not HTTP or SQLite:
// - `node:http`, one route (`POST /v1/batch`), the write key compared as a fixed Basic header;
// - the body read whole and `JSON.parse`d; each call's type checked against the six types, its
//   messageId a string, a userId or anonymousId present; the call's own JSON text re-serialized with
//   its received time (one `JSON.stringify` a call, as any store of calls needs);
// - one row per call (id, source, messageId, received time, JSON text) inserted into one SQLite table
//   with a unique dedupe index, on a store thread (ingest-floor-store.ts), in fsynced group commits
//   (WAL, synchronous=FULL): requests arriving while a commit runs share the next one;
// - each request answered `200 {"success":true}` after the commit that holds its calls.
// No routing, no profiles, no enrichment beyond the received time, no metrics, no logging.
// With `profiles`, the least a durable ingest that keeps a profile per user from every call does on
// top: each call's profile key (its userId, else its anonymousId), track event name, time (its
// timestamp, else the received time) and properties (or identify and group traits) as JSON text, stored
// in the same commit as one profile event row indexed by profile, and one profile row (first and last
// seen) per user the commit touched. No identity resolution (an anonymousId is never linked to a
// userId), no traits merged, no computed traits: what Sluice's profile upkeep does beyond this is its own
// work.
// Prints its port on stdout.
//   node bench/lib/ingest-floor-server.ts <sqlite-file> <writeKey> [profiles]
import { createServer, type ServerResponse } from 'node:http'
import { Worker } from 'node:worker_threads'

const [path = '', writeKey = 'k', mode = ''] = process.argv.slice(2)
const profiles = mode === 'profiles'
const expectedAuthorization = `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`
const TYPES = new Set(['identify', 'track', 'page', 'screen', 'group', 'alias'])
const SOURCE = 'src_floor'
/** The separators of a packed group are control characters; a JSON text never holds them raw. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing exactly these
const CONTROL = /[\u0000-\u001f]/
const OK = Buffer.from('{"success":true}')

const store = new Worker(new URL('./ingest-floor-store.ts', import.meta.url), {
  workerData: { path, profiles },
})
await new Promise<void>((resolve, reject) => {
  store.once('message', () => resolve())
  store.once('error', reject)
})

// The group commit: one commit in flight; what arrives meanwhile waits for the next one.
let waiting: ServerResponse[] = []
let packed = ''
let inFlight: ServerResponse[] | null = null
store.on('message', () => {
  for (const response of inFlight ?? []) answer(response, 200, OK)
  inFlight = null
  flush()
})
function flush(): void {
  if (inFlight !== null || waiting.length === 0) return
  inFlight = waiting
  store.postMessage(packed)
  waiting = []
  packed = ''
}

function answer(response: ServerResponse, status: number, body: Buffer): void {
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length })
  response.end(body)
}
const refuse = (response: ServerResponse, message: string) =>
  answer(response, 400, Buffer.from(JSON.stringify({ error: { code: 'invalid', message } })))

/** A row as the store thread reads it: fields and rows split by characters JSON text never holds raw. */
function rowsOf(body: string, receivedAt: number): string | string[] {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return ['the body is not JSON']
  }
  const batch = (parsed as { batch?: unknown } | null)?.batch
  if (!Array.isArray(batch)) return ['batch must be an array']
  let rows = ''
  for (const call of batch as Record<string, unknown>[]) {
    if (call === null || typeof call !== 'object') return ['each call must be an object']
    if (typeof call.type !== 'string' || !TYPES.has(call.type)) return ['unknown type']
    const messageId = call.messageId
    if (typeof messageId !== 'string' || messageId === '' || CONTROL.test(messageId))
      return ['messageId must be a string']
    const hasId = (value: unknown) => (typeof value === 'string' && value !== '') || typeof value === 'number'
    if (!hasId(call.userId) && !hasId(call.anonymousId)) return ['userId or anonymousId is required']
    call.receivedAt = new Date(receivedAt).toISOString()
    rows += `${messageId}\u0000${JSON.stringify(call)}`
    if (profiles) {
      const key = String(hasId(call.userId) ? call.userId : call.anonymousId)
      const event = call.type === 'track' && typeof call.event === 'string' ? call.event : ''
      if (CONTROL.test(key) || CONTROL.test(event))
        return ['ids and event names may not hold control characters']
      const timestamp = typeof call.timestamp === 'string' ? Date.parse(call.timestamp) : Number.NaN
      const found = call.type === 'identify' || call.type === 'group' ? call.traits : call.properties
      const properties = found !== null && typeof found === 'object' && !Array.isArray(found) ? found : {}
      rows += `\u0000${key}\u0000${event}\u0000${Number.isNaN(timestamp) ? receivedAt : timestamp}\u0000${JSON.stringify(properties)}`
    }
    rows += '\u0001'
  }
  return rows
}

const server = createServer((request, response) => {
  if (request.method !== 'POST' || request.url !== '/v1/batch') return answer(response, 404, OK)
  if (request.headers.authorization !== expectedAuthorization) return answer(response, 401, OK)
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    const receivedAt = Date.now()
    const rows = rowsOf(Buffer.concat(chunks).toString('utf8'), receivedAt)
    if (Array.isArray(rows)) return refuse(response, rows[0]!)
    packed += `${receivedAt}\u0002${SOURCE}\u0002${rows}\u0003`
    waiting.push(response)
    flush()
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  if (address && typeof address === 'object') process.stdout.write(`${address.port}\n`)
})
process.on('SIGTERM', () => {
  server.close()
  void store.terminate().then(() => process.exit(0))
})
