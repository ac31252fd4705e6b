// npm run bench:client [-- --quick] [-- --runs N] [-- --enqueue-runs M] [-- --out FILE]
// @sluice/analytics against @segment/analytics-node, in the same run, same sink, same flushAt:
// N track calls each, every client in its own process. Measures enqueue calls/s, heap growth,
// delivered events/s (unique messages received / time from the first call to close resolving),
// duplicates received and events lost. Several rounds (3 by default; the two clients alternate
// going first) because a shared machine is noisy: the table shows each figure's median, the goals
// use the worst round for duplicates and losses.
// Enqueue gets M more rounds (6 by default, alternating likewise) that stop after the loop: the
// loop is short (a fraction of a second for @sluice/analytics, seconds for the peer), so one burst
// of load on a shared machine moves a single figure a lot, and always down; the enqueue figure is
// the median of all N + M loops of each client, run identically. Prints a markdown table; writes
// bench/results/client.json (every round included), or FILE with --out.
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { machine, runJson, startProcess, stop } from './lib/processes.ts'

const quick = process.argv.includes('--quick')
const runsArg = process.argv.indexOf('--runs')
const enqueueRunsArg = process.argv.indexOf('--enqueue-runs')
const outArg = process.argv.indexOf('--out')
const rounds = runsArg > 0 ? Number(process.argv[runsArg + 1]) : quick ? 1 : 3
const enqueueRounds = enqueueRunsArg > 0 ? Number(process.argv[enqueueRunsArg + 1]) : quick ? 0 : 6
const calls = quick ? 5_000 : 100_000
const flushAt = 20
const libraries = { sluice: '@sluice/analytics', segment: '@segment/analytics-node 3.1.0' } as const
type Library = keyof typeof libraries

interface EnqueueResult {
  calls: number
  enqueueMs: number
  enqueueCpuMs: number
}

interface RunnerResult extends EnqueueResult {
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

/** One enqueue loop: calls/s by wall time, and main-thread CPU µs per call. */
interface EnqueueSample {
  perSecond: number
  cpuMicrosPerCall: number
}

interface Result {
  library: string
  enqueuePerSecond: number
  enqueueCpuMicrosPerCall: number
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

const runnerArgs = (library: Library, url: string, count: number) => [
  '--expose-gc',
  join(import.meta.dirname, 'lib/client-runner.ts'),
  library,
  url,
  String(count),
  String(flushAt),
]

const sampleOf = (runner: EnqueueResult): EnqueueSample => ({
  perSecond: Math.round(runner.calls / (runner.enqueueMs / 1000)),
  cpuMicrosPerCall: Math.round((runner.enqueueCpuMs * 1000 * 100) / runner.calls) / 100,
})

async function run(url: string, library: Library, count: number): Promise<Result> {
  await sink(url, '/reset')
  const runner = await runJson<RunnerResult>(runnerArgs(library, url, count))
  const stats = await sink(url, '/stats')
  const enqueue = sampleOf(runner)
  return {
    library: libraries[library],
    enqueuePerSecond: enqueue.perSecond,
    enqueueCpuMicrosPerCall: enqueue.cpuMicrosPerCall,
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

/** An enqueue-only round: the same runner and loop, stopped before anything is sent. */
async function enqueueOnly(url: string, library: Library, count: number): Promise<EnqueueSample> {
  return sampleOf(await runJson<EnqueueResult>([...runnerArgs(library, url, count), 'enqueue-only']))
}

const { child, match } = await startProcess([join(import.meta.dirname, 'lib/client-sink.ts')], /^(\d+)$/m)
const all: Record<Library, Result[]> = { sluice: [], segment: [] }
/** Every enqueue loop of each client: the full rounds' first, then the enqueue-only rounds'. */
const enqueueSamples: Record<Library, EnqueueSample[]> = { sluice: [], segment: [] }
try {
  const url = `http://127.0.0.1:${match[1]}`
  // Warm the sink's JIT so neither measured run pays for it.
  await run(url, 'sluice', 2_000)
  await run(url, 'segment', 2_000)
  for (let round = 0; round < rounds; round++) {
    const order: Library[] = round % 2 === 0 ? ['segment', 'sluice'] : ['sluice', 'segment']
    for (const library of order) all[library].push(await run(url, library, calls))
  }
  for (const library of ['sluice', 'segment'] as const) {
    enqueueSamples[library].push(
      ...all[library].map((r) => ({
        perSecond: r.enqueuePerSecond,
        cpuMicrosPerCall: r.enqueueCpuMicrosPerCall,
      })),
    )
  }
  for (let round = 0; round < enqueueRounds; round++) {
    const order: Library[] = round % 2 === 0 ? ['segment', 'sluice'] : ['sluice', 'segment']
    for (const library of order) enqueueSamples[library].push(await enqueueOnly(url, library, calls))
  }
} finally {
  await stop(child)
}

function medianOf<T>(items: T[], pick: (item: T) => number): number {
  const sorted = items.map(pick).sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

/**
 * The median of each figure over the rounds (enqueue: over every enqueue loop; duplicates and
 * losses: the worst round).
 */
function summary(results: Result[], enqueue: EnqueueSample[]): Result {
  const median = <K extends keyof Result>(key: K) => medianOf(results, (r) => r[key] as number)
  return {
    library: results[0]!.library,
    enqueuePerSecond: medianOf(enqueue, (e) => e.perSecond),
    enqueueCpuMicrosPerCall: medianOf(enqueue, (e) => e.cpuMicrosPerCall),
    heapGrowthMb: median('heapGrowthMb'),
    retainedMb: median('retainedMb'),
    peakHeapGrowthMb: median('peakHeapGrowthMb'),
    deliveredPerSecond: median('deliveredPerSecond'),
    requests: median('requests'),
    duplicates: Math.max(...results.map((r) => r.duplicates)),
    lost: Math.max(...results.map((r) => r.lost)),
    totalSeconds: median('totalSeconds'),
  }
}
const ours = summary(all.sluice, enqueueSamples.sluice)
const peer = summary(all.segment, enqueueSamples.segment)
/** Lowest and highest enqueue calls/s over the loops, for the spread. */
const spread = (library: Library) => {
  const rates = enqueueSamples[library].map((e) => e.perSecond)
  return { min: Math.min(...rates), max: Math.max(...rates), loops: rates.length }
}
const enqueueSpread = { sluice: spread('sluice'), segment: spread('segment') }
const ratio = (a: number, b: number) => (b === 0 ? '∞' : `${(a / b).toFixed(a / b >= 10 ? 0 : 2)}×`)
const ratios = {
  enqueue: ours.enqueuePerSecond / peer.enqueuePerSecond,
  heapGrowth: ours.heapGrowthMb / peer.heapGrowthMb,
  delivered: ours.deliveredPerSecond / peer.deliveredPerSecond,
}
const goals = {
  'enqueue ≥ 15× peer': ratios.enqueue >= 15,
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
  `Median of ${rounds} round${rounds === 1 ? '' : 's'}; duplicates and lost: the worst round; enqueue: median of ${enqueueSpread.sluice.loops} loops of each client (${rounds} full + ${enqueueRounds} enqueue-only rounds).`,
  '',
  '| | enqueue calls/s | heap growth after enqueue | retained after GC | peak heap growth | delivered events/s | requests | duplicates | lost |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...[ours, peer].map(
    (r) =>
      `| ${r.library} | ${fmt(r.enqueuePerSecond)} | ${r.heapGrowthMb} MB | ${r.retainedMb} MB | ${r.peakHeapGrowthMb} MB | ${fmt(r.deliveredPerSecond)} | ${fmt(r.requests)} | ${fmt(r.duplicates)} | ${fmt(r.lost)} |`,
  ),
  `| **ratio (ours / peer)** | **${ratio(ours.enqueuePerSecond, peer.enqueuePerSecond)}** | **${ratios.heapGrowth.toFixed(3)}×** | ${(ours.retainedMb / peer.retainedMb).toFixed(3)}× | ${(ours.peakHeapGrowthMb / peer.peakHeapGrowthMb).toFixed(3)}× | **${ratio(ours.deliveredPerSecond, peer.deliveredPerSecond)}** | | | |`,
  '',
  `Enqueue spread (calls/s, lowest–highest loop): ${libraries.sluice} ${fmt(enqueueSpread.sluice.min)}–${fmt(enqueueSpread.sluice.max)}, ${libraries.segment} ${fmt(enqueueSpread.segment.min)}–${fmt(enqueueSpread.segment.max)}. Main-thread CPU per call (median): ${ours.enqueueCpuMicrosPerCall} µs vs ${peer.enqueueCpuMicrosPerCall} µs.`,
  '',
  `${quick ? 'Smoke run: 5,000 calls are mostly JIT warm-up; the goals are for the full run. ' : ''}Goals: ${Object.entries(
    goals,
  )
    .map(([goal, met]) => `${met ? '✅' : '❌'} ${goal}`)
    .join(' · ')}`,
]
console.log(lines.join('\n'))

const out =
  outArg > 0
    ? resolve(process.argv[outArg + 1]!)
    : join(import.meta.dirname, 'results', quick ? 'client.quick.json' : 'client.json')
await mkdir(dirname(out), { recursive: true })
const result = {
  date: new Date().toISOString(),
  machine: host,
  calls,
  flushAt,
  rounds,
  enqueueRounds,
  median: { sluice: ours, segment: peer },
  ratios,
  goals,
  enqueueSpread,
  all,
  enqueueSamples,
}
/** What bench/results/client.json holds; the suite's figures are read from it (bench/lib/suite-scenarios.ts). */
export type ClientResult = typeof result
await writeFile(out, `${JSON.stringify(result, null, 2)}\n`)
console.log(`\nWrote ${out}`)
