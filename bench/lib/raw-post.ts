// Baseline for delivery: raw undici POSTs of the same body to the same no-op receiver, with the
// same number of connections as Sluice's per-destination concurrency. Prints JSON on stdout.
//   node bench/lib/raw-post.ts <url> <count> <connections>
import { Pool } from 'undici'

const [url = '', countArg = '10000', connectionsArg = '32'] = process.argv.slice(2)
const count = Number(countArg)
const connections = Number(connectionsArg)
const target = new URL(url)
const pool = new Pool(target.origin, { connections, pipelining: 1 })
const body = Buffer.from(
  JSON.stringify({
    version: 1,
    type: 'track',
    userId: 'bench-user',
    event: 'Order Completed',
    properties: { total: 12.5, currency: 'EUR', items: 3 },
    context: { library: { name: 'bench' }, ip: '127.0.0.1' },
    messageId: '00000000-0000-4000-8000-000000000000',
    timestamp: new Date().toISOString(),
  }),
)
let next = 0
const cpuBefore = process.cpuUsage()
const started = performance.now()
async function worker(): Promise<void> {
  while (next < count) {
    next++
    const response = await pool.request({
      path: target.pathname,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Sluice/1.0' },
      body,
    })
    await response.body.dump()
  }
}
await Promise.all(Array.from({ length: connections }, worker))
const seconds = (performance.now() - started) / 1000
// CPU time per request (one thread does all the work here), comparable with drain-backlog's.
const cpu = process.cpuUsage(cpuBefore)
await pool.close()
process.stdout.write(
  `${JSON.stringify({ count, seconds, perSecond: count / seconds, cpuUsPerRequest: Math.round(((cpu.user + cpu.system) / count) * 10) / 10 })}\n`,
)
