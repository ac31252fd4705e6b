// What metrics cost a delivery, measured by CPU time rather than wall time alone: alternating drains
// (bench/lib/drain-backlog.ts) with metrics off and on, in ABBA order (off, on, on, off, ...) so that
// neither side always runs first, against one no-op receiver. Prints every drain and the medians.
//   node bench/lib/metrics-cost.ts [pairs=6] [deliveries=15000] [concurrency=32]
// Extra environment for one side only: METRICS_COST_ENV_ON / METRICS_COST_ENV_OFF ("NAME=value,...").
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { runJson, startProcess, stop } from './processes.ts'

interface Drain {
  perSecond: number
  cpuUsPerDelivery: { mainThread: number; process: number }
}

const [pairsArg = '6', countArg = '15000', concurrencyArg = '32'] = process.argv.slice(2)
const pairs = Number(pairsArg)
const envOf = (spec: string | undefined): Record<string, string> =>
  Object.fromEntries(
    (spec ?? '')
      .split(',')
      .filter(Boolean)
      .map((pair) => pair.split('=') as [string, string]),
  )
const sideEnv = { on: envOf(process.env.METRICS_COST_ENV_ON), off: envOf(process.env.METRICS_COST_ENV_OFF) }
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const loadBefore = loadavg()
const { child, match } = await startProcess([join(import.meta.dirname, 'noop-server.ts')], /^(\d+)$/m)
const url = `http://127.0.0.1:${match[1]}/hook`
const drain = (side: 'on' | 'off') =>
  runJson<Drain>(
    [join(import.meta.dirname, 'drain-backlog.ts'), url, countArg, concurrencyArg, side],
    sideEnv[side],
  )
try {
  await drain('on') // warm-up: receiver connections, disk cache
  const results: { off: Drain; on: Drain }[] = []
  for (let pair = 0; pair < pairs; pair++) {
    const order: ('on' | 'off')[] = pair % 2 === 0 ? ['off', 'on'] : ['on', 'off']
    const got: Partial<Record<'on' | 'off', Drain>> = {}
    for (const side of order) got[side] = await drain(side)
    const { off, on } = got as { off: Drain; on: Drain }
    results.push({ off, on })
    console.log(
      `pair ${pair} (${order.join(',')}): off ${Math.round(off.perSecond)}/s ${off.cpuUsPerDelivery.process}/${off.cpuUsPerDelivery.mainThread} µs, ` +
        `on ${Math.round(on.perSecond)}/s ${on.cpuUsPerDelivery.process}/${on.cpuUsPerDelivery.mainThread} µs`,
    )
  }
  const summary = {
    pairs,
    deliveries: Number(countArg),
    loadavg: { before: loadBefore.map((l) => l.toFixed(2)), after: loadavg().map((l) => l.toFixed(2)) },
    rateOnOverOff: median(results.map((r) => r.on.perSecond / r.off.perSecond)).toFixed(3),
    processCpuOffOverOn: median(
      results.map((r) => r.off.cpuUsPerDelivery.process / r.on.cpuUsPerDelivery.process),
    ).toFixed(3),
    mainThreadCpuOffOverOn: median(
      results.map((r) => r.off.cpuUsPerDelivery.mainThread / r.on.cpuUsPerDelivery.mainThread),
    ).toFixed(3),
    medianUs: {
      off: {
        process: median(results.map((r) => r.off.cpuUsPerDelivery.process)),
        mainThread: median(results.map((r) => r.off.cpuUsPerDelivery.mainThread)),
      },
      on: {
        process: median(results.map((r) => r.on.cpuUsPerDelivery.process)),
        mainThread: median(results.map((r) => r.on.cpuUsPerDelivery.mainThread)),
      },
    },
  }
  console.log(JSON.stringify(summary))
} finally {
  await stop(child)
}
