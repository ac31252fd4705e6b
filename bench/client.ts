// npm run bench:client [-- --quick] [-- --runs N]
// @sluice/analytics against @segment/analytics-node, in the same run, same sink, same flushAt:
// N track calls each, every client in its own process. Measures enqueue calls/s, heap growth,
// delivered events/s (unique messages received / time from the first call to close resolving),
// duplicates received and events lost. Several rounds (3 by default; the two clients alternate
// going first) because a shared machine is noisy: the table shows each figure's median, the goals
// use the worst round for duplicates and losses. Prints a markdown table; writes
// bench/results/client.json (every round included).
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { machine, runJson, startProcess, stop } from './lib/processes.ts'

const quick = process.argv.includes('--quick')
const runsArg = process.argv.indexOf('--runs')
const rounds = runsArg > 0 ? Number(process.argv[runsArg + 1]) : quick ? 1 : 3
const calls = quick ? 5_000 : 100_000
const flushAt = 20
const libraries = { sluice: '@sluice/analytics', segment: '@segment/analytics-node 3.1.0' } as const
type Library = keyof typeof libraries

interface RunnerResult {
  calls: number
  enqueueMs: number
  heapBeforeMb: number
  heapGrowthMb: number
  retainedMb: number
  peakHeapGrowthMb: number
  totalMs: number
}

interface SinkStats {
  requests: number
  received: number
  unique: number
}

interface Result {
  library: string
  enqueuePerSecond: number
  heapGrowthMb: number
  retainedMb: number
  peakHeapGrowthMb: number
  deliveredPerSecond: number
  requests: number
  duplicates: number
  lost: number
  totalSeconds: number
}

async function sink(url: string, path: '/stats' | '/reset'): Promise<SinkStats> {
  const response = await fetch(url + path, { method: path === '/stats' ? 'GET' : 'POST' })
  return (await response.json()) as SinkStats
}

async function run(url: string, library: Library, count: number): Promise<Result> {
  await sink(url, '/reset')
  const runner = await runJson<RunnerResult>([
    '--expose-gc',
    join(import.meta.dirname, 'lib/client-runner.ts'),
    library,
    url,
    String(count),
    String(flushAt),
  ])
  const stats = await sink(url, '/stats')
  return {
    library: libraries[library],
    enqueuePerSecond: Math.round(count / (runner.enqueueMs / 1000)),
    heapGrowthMb: runner.heapGrowthMb,
    retainedMb: runner.retainedMb,
    peakHeapGrowthMb: runner.peakHeapGrowthMb,
    deliveredPerSecond: Math.round(stats.unique / (runner.totalMs / 1000)),
    requests: stats.requests,
    duplicates: stats.received - stats.unique,
    lost: count - stats.unique,
    totalSeconds: Math.round(runner.totalMs) / 1000,
  }
}

const { child, match } = await startProcess([join(import.meta.dirname, 'lib/client-sink.ts')], /^(\d+)$/m)
const all: Record<Library, Result[]> = { sluice: [], segment: [] }
try {
  const url = `http://127.0.0.1:${match[1]}`
  // Warm the sink's JIT so neither measured run pays for it.
  await run(url, 'sluice', 2_000)
  await run(url, 'segment', 2_000)
  for (let round = 0; round < rounds; round++) {
    const order: Library[] = round % 2 === 0 ? ['segment', 'sluice'] : ['sluice', 'segment']
    for (const library of order) all[library].push(await run(url, library, calls))
  }
} finally {
  await stop(child)
}

/** The median of each figure over the rounds (duplicates and losses: the worst round). */
function summary(results: Result[]): Result {
  const median = (pick: (r: Result) => number) => {
    const sorted = results.map(pick).sort((a, b) => a - b)
    return sorted[Math.floor(sorted.length / 2)]!
  }
  return {
    library: results[0]!.library,
    enqueuePerSecond: median((r) => r.enqueuePerSecond),
    heapGrowthMb: median((r) => r.heapGrowthMb),
    retainedMb: median((r) => r.retainedMb),
    peakHeapGrowthMb: median((r) => r.peakHeapGrowthMb),
    deliveredPerSecond: median((r) => r.deliveredPerSecond),
    requests: median((r) => r.requests),
    duplicates: Math.max(...results.map((r) => r.duplicates)),
    lost: Math.max(...results.map((r) => r.lost)),
    totalSeconds: median((r) => r.totalSeconds),
  }
}
const ours = summary(all.sluice)
const peer = summary(all.segment)
const ratio = (a: number, b: number) => (b === 0 ? '∞' : `${(a / b).toFixed(a / b >= 10 ? 0 : 2)}×`)
const ratios = {
  enqueue: ours.enqueuePerSecond / peer.enqueuePerSecond,
  heapGrowth: ours.heapGrowthMb / peer.heapGrowthMb,
  delivered: ours.deliveredPerSecond / peer.deliveredPerSecond,
}
const goals = {
  'enqueue ≥ 10× peer': ratios.enqueue >= 10,
  'heap growth ≤ 0.1× peer': ratios.heapGrowth <= 0.1,
  'delivered ≥ 5× peer': ratios.delivered >= 5,
  'zero duplicates': ours.duplicates === 0,
  'zero lost': ours.lost === 0,
}
const host = machine()
const fmt = (n: number) => n.toLocaleString('en-US')
const lines = [
  `### Client benchmark: ${fmt(calls)} track calls, flushAt ${flushAt}${quick ? ' (quick)' : ''}`,
  '',
  `Machine: ${host.cpus} CPUs (${host.model}), Node ${host.node}. Each client and the sink in its own process.`,
  `Median of ${rounds} round${rounds === 1 ? '' : 's'}; duplicates and lost: the worst round.`,
  '',
  '| | enqueue calls/s | heap growth after enqueue | retained after GC | peak heap growth | delivered events/s | requests | duplicates | lost |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...[ours, peer].map(
    (r) =>
      `| ${r.library} | ${fmt(r.enqueuePerSecond)} | ${r.heapGrowthMb} MB | ${r.retainedMb} MB | ${r.peakHeapGrowthMb} MB | ${fmt(r.deliveredPerSecond)} | ${fmt(r.requests)} | ${fmt(r.duplicates)} | ${fmt(r.lost)} |`,
  ),
  `| **ratio (ours / peer)** | **${ratio(ours.enqueuePerSecond, peer.enqueuePerSecond)}** | **${ratios.heapGrowth.toFixed(3)}×** | ${(ours.retainedMb / peer.retainedMb).toFixed(3)}× | ${(ours.peakHeapGrowthMb / peer.peakHeapGrowthMb).toFixed(3)}× | **${ratio(ours.deliveredPerSecond, peer.deliveredPerSecond)}** | | | |`,
  '',
  `${quick ? 'Smoke run: 5,000 calls are mostly JIT warm-up; the goals are for the full run. ' : ''}Goals: ${Object.entries(
    goals,
  )
    .map(([goal, met]) => `${met ? '✅' : '❌'} ${goal}`)
    .join(' · ')}`,
]
console.log(lines.join('\n'))

const out = join(import.meta.dirname, 'results', quick ? 'client.quick.json' : 'client.json')
await mkdir(join(import.meta.dirname, 'results'), { recursive: true })
await writeFile(
  out,
  `${JSON.stringify({ date: new Date().toISOString(), machine: host, calls, flushAt, rounds, median: { sluice: ours, segment: peer }, ratios, goals, all }, null, 2)}\n`,
)
console.log(`\nWrote ${out}`)
