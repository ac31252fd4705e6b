// Webhook receivers for the isolation and backlog scenarios, in their own process:
//   node bench/lib/suite-receivers.ts <listeners> <hanging> [hang|throttle]
// Starts <listeners> HTTP listeners on 127.0.0.1. The last <hanging> of them accept connections and
// never answer (no byte is read or written), or with `throttle` answer every other request
// `429 Too Many Requests` (the rest 200, recorded). The others answer 200 at once and, per listener, record
// each receipt's time and messageId (found with indexOf, not a JSON parse, so they stay cheap) to
// count unique messages and duplicates. Prints one JSON line {"ports":[...],"control":port}; the
// control port answers GET /stats with the counts and GET /window?... with rates (see below).
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createNetServer, type Server, type Socket } from 'node:net'

const [listenersArg = '1', hangingArg = '0', modeArg = 'hang'] = process.argv.slice(2)
const listeners = Number(listenersArg)
const hanging = Number(hangingArg)

interface Tally {
  /** Arrival times (performance.now()) of unique messages, in order. */
  times: Float64Array
  unique: number
  duplicates: number
  seen: Set<string>
}

const tallies: Tally[] = []
const tooMany = Buffer.from('{"error":"slow down"}')
const answer = Buffer.from('{"success":true}')
const MARK = '"messageId":"'

function record(tally: Tally, body: string): void {
  const at = performance.now()
  const start = body.indexOf(MARK)
  const id = start < 0 ? body : body.slice(start + MARK.length, body.indexOf('"', start + MARK.length))
  if (tally.seen.has(id)) {
    tally.duplicates++
    return
  }
  tally.seen.add(id)
  if (tally.unique === tally.times.length) {
    const grown = new Float64Array(tally.times.length * 2)
    grown.set(tally.times)
    tally.times = grown
  }
  tally.times[tally.unique++] = at
}

function healthy(tally: Tally) {
  return (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length })
      response.end(answer)
      record(tally, chunks.length === 1 ? chunks[0]!.toString() : Buffer.concat(chunks).toString())
    })
  }
}

/** Every other request gets `429` (the refused ones are not recorded: Sluice sends them again). */
function throttling(tally: Tally) {
  let requests = 0
  const ok = healthy(tally)
  return (request: IncomingMessage, response: ServerResponse) => {
    if (requests++ % 2 === 0) return ok(request, response)
    request.resume()
    request.on('end', () => {
      response.writeHead(429, { 'content-type': 'application/json', 'content-length': tooMany.length })
      response.end(tooMany)
    })
  }
}

const sockets = new Set<Socket>()
function listen(server: Server | ReturnType<typeof createHttpServer>): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  )
}

const ports: number[] = []
for (let i = 0; i < listeners; i++) {
  if (i >= listeners - hanging && modeArg === 'throttle') {
    const tally: Tally = { times: new Float64Array(4096), unique: 0, duplicates: 0, seen: new Set() }
    tallies.push(tally)
    const server = createHttpServer(throttling(tally))
    server.keepAliveTimeout = 60_000
    ports.push(await listen(server))
    continue
  }
  if (i >= listeners - hanging) {
    // Accepts and holds every connection; Sluice's request deadline is what ends them.
    const server = createNetServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => sockets.delete(socket))
    })
    ports.push(await listen(server))
    tallies.push({ times: new Float64Array(1), unique: 0, duplicates: 0, seen: new Set() })
    continue
  }
  const tally: Tally = { times: new Float64Array(4096), unique: 0, duplicates: 0, seen: new Set() }
  tallies.push(tally)
  const server = createHttpServer(healthy(tally))
  server.keepAliveTimeout = 60_000
  ports.push(await listen(server))
}

/**
 * GET /window?listeners=0,1,2&skip=K&upto=N&from=F&span=S: over the union of the named listeners' receipts,
 * sorted, the time origin is the first receipt. With `skip`, the window runs from the K-th receipt to
 * the last one (or to the N-th with `upto`, or to `from + span` ms); with `from`/`span` it is [origin+from, origin+from+span].
 * Answers {count, seconds, perSecond, total, endsInMs} (endsInMs < 0 once the window has passed).
 */
function windowRate(url: URL): unknown {
  const chosen = (url.searchParams.get('listeners') ?? '')
    .split(',')
    .filter(Boolean)
    .map(Number)
    .map((i) => tallies[i]!)
  let total = 0
  for (const tally of chosen) total += tally.unique
  const all = new Float64Array(total)
  let at = 0
  for (const tally of chosen) {
    all.set(tally.times.subarray(0, tally.unique), at)
    at += tally.unique
  }
  all.sort()
  if (total === 0) return { count: 0, seconds: 0, perSecond: 0, total }
  const origin = all[0]!
  const skip = Number(url.searchParams.get('skip') ?? 0)
  const from = url.searchParams.has('from')
    ? origin + Number(url.searchParams.get('from'))
    : all[Math.min(skip, total - 1)]!
  const upto = url.searchParams.has('upto') ? Math.min(total, Number(url.searchParams.get('upto'))) : 0
  const until = url.searchParams.has('span')
    ? from + Number(url.searchParams.get('span'))
    : upto > 0
      ? all[upto - 1]!
      : (all[total - 1] ?? from)
  let count = 0
  for (let i = 0; i < total; i++) if (all[i]! > from && all[i]! <= until) count++
  const seconds = (until - from) / 1000
  return {
    count,
    seconds,
    perSecond: seconds > 0 ? count / seconds : 0,
    total,
    endsInMs: until - performance.now(),
  }
}

const control = createHttpServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://control')
  const body =
    url.pathname === '/window'
      ? windowRate(url)
      : {
          listeners: tallies.map((tally) => ({ unique: tally.unique, duplicates: tally.duplicates })),
          openHangingSockets: sockets.size,
        }
  response.writeHead(200, { 'content-type': 'application/json' })
  response.end(JSON.stringify(body))
})
const controlPort = await listen(control)
process.stdout.write(`${JSON.stringify({ ports, control: controlPort })}\n`)
process.on('SIGTERM', () => process.exit(0))
