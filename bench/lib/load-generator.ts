// Closed-loop load generator, run in its own process so it does not share an event loop with the
// server it measures. Sends `/v1/batch` bodies of N track calls with unique messageIds over C
// keep-alive connections for D ms, then prints a JSON summary on stdout.
//   node bench/lib/load-generator.ts <url> <writeKey> <events-per-request> <connections> <durationMs> [userId]
import { Pool } from 'undici'

const [
  url = '',
  writeKey = '',
  perRequestArg = '20',
  connectionsArg = '32',
  durationArg = '5000',
  userId = 'bench-user',
] = process.argv.slice(2)
const perRequest = Number(perRequestArg)
const connections = Number(connectionsArg)
const durationMs = Number(durationArg)
const origin = new URL(url).origin
const path = new URL(url).pathname
const pool = new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 })
const authorization = `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`

// The body is built from fixed pieces around the messageIds, so generating it costs almost nothing.
const runId = `${process.pid}-${Date.now()}`
const head =
  `{"type":"track","userId":${JSON.stringify(userId)},"event":"Order Completed",` +
  '"properties":{"total":12.5,"currency":"EUR","items":3},"context":{"library":{"name":"bench"}},"messageId":"'
let sequence = 0
function body(): string {
  const parts: string[] = []
  for (let i = 0; i < perRequest; i++) parts.push(`${head}${runId}-${sequence++}"}`)
  return `{"batch":[${parts.join(',')}]}`
}

let requests = 0
let errors = 0
const statuses: Record<string, number> = {}
const deadline = Date.now() + durationMs
const started = performance.now()
const cpuAtStart = process.cpuUsage()

async function worker(): Promise<void> {
  while (Date.now() < deadline) {
    try {
      const response = await pool.request({
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body: body(),
      })
      await response.body.dump()
      statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1
      if (response.statusCode === 200) requests++
      else errors++
    } catch {
      errors++
    }
  }
}

await Promise.all(Array.from({ length: connections }, worker))
const seconds = (performance.now() - started) / 1000
const cpu = process.cpuUsage(cpuAtStart)
await pool.close()
process.stdout.write(
  `${JSON.stringify({ requests, events: requests * perRequest, errors, statuses, seconds, eventsPerSecond: (requests * perRequest) / seconds, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`,
)
