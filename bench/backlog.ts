// npm run bench -- --only backlog   or   node bench/backlog.ts [--quick]
// Backlog: a Sluice process starts on a store holding 1,000,000 pending deliveries (stored beforehand by
// another process through store.ingest, so what seeding allocates is not counted) and drains them to
// a no-op receiver (its own process, also counting duplicates). We measure the Sluice process's peak
// RSS and its drain rate, against the drain rate of the same Sluice with a 10,000 backlog, measured the
// same way in the same run.
// Drain rate: receipts per second from receipt `skip` (past start-up: JIT, first claims, first
// connections) to receipt 10,000 for both (the whole small backlog), so the ratio compares the same
// stretch of the drain and differs only in the backlog's size. Also reported: the big backlog's rate
// sustained over `spanMs` from receipt `skip`. Full runs measure the small backlog before and after the
// big one and take the mean. Quick mode: 100k against 5k (once).
// Writes bench/results/backlog.json (backlog.quick.json).
import { mkdir, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { machine } from './lib/processes.ts'
import { dataProblems, Receivers, SuiteSluice, waitFor, withDataDir } from './lib/suite-parties.ts'
import type { SuiteSluiceStopped } from './lib/suite-sluice.ts'

const quick = process.argv.includes('--quick')
const big = quick ? 100_000 : 1_000_000
const small = quick ? 5_000 : 10_000
const skip = small / 10
// The window must end before the big backlog does: 100k over 2 s leaves room up to 50,000 POSTs/s.
const spanMs = quick ? 2_000 : 20_000
const concurrency = 32
const rssGoalMb = 160

interface Run {
  backlog: number
  seedSeconds: number
  /** From receipt `skip` to receipt `small`. */
  perSecond: number
  /** From receipt `skip`, over `spanMs` (the big backlog only). */
  sustained: { perSecond: number; count: number; seconds: number } | null
  startRssMb: number
  drainPeakRssMb: number
  lifetimePeakRssMb: number | null
  memory: Pick<SuiteSluiceStopped, 'atPeak' | 'atStop'>
  problems: string[]
}

async function measure(backlog: number): Promise<Run> {
  const receivers = await Receivers.start(1)
  try {
    return await withDataDir(async (dataDir) => {
      const seeded = await SuiteSluice.seed({
        mode: 'seed',
        dataDir,
        urls: receivers.urls,
        messages: backlog,
      })
      const sluice = await SuiteSluice.serve({ mode: 'serve', dataDir, concurrency })
      try {
        const whole = backlog <= small
        let sustained: Run['sustained'] = null
        if (whole) {
          await waitFor(
            'the backlog to drain',
            async () => (await receivers.stats()).listeners[0]!.unique >= backlog,
            120_000,
          )
        } else {
          const rate = await receivers.measureWindow([0], { skip, spanMs }, spanMs + 120_000)
          sustained = { perSecond: rate.perSecond, count: rate.count, seconds: rate.seconds }
        }
        const sameRange = await receivers.window([0], { skip, upto: small })
        const stopped = await sluice.stop()
        const stats = await receivers.stats()
        const problems = dataProblems(stopped, stats, [0])
        const destination = stopped.destinations[0]!
        if (whole && destination.delivered !== backlog) {
          problems.push(`${destination.delivered} of ${backlog} recorded as delivered after the drain`)
        }
        if (!whole && stats.listeners[0]!.unique >= backlog) {
          problems.push('the big backlog drained within the window: the window was not all under load')
        }
        return {
          backlog,
          seedSeconds: seeded.seconds,
          perSecond: sameRange.perSecond,
          sustained,
          startRssMb: stopped.startRssMb,
          drainPeakRssMb: stopped.drainPeakRssMb,
          lifetimePeakRssMb: stopped.lifetimePeakRssMb,
          memory: { atPeak: stopped.atPeak, atStop: stopped.atStop },
          problems,
        }
      } finally {
        await sluice.kill()
      }
    })
  } finally {
    await receivers.stop()
  }
}

const loadBefore = loadavg()[0]!
// Full runs measure the small backlog before and after the big one, so a drift in the machine's other
// load hits both sides alike; the baseline is their mean.
const baselines = [await measure(small)]
const large = await measure(big)
if (!quick) baselines.push(await measure(small))
const baseline: Run = {
  ...baselines[0]!,
  perSecond: baselines.reduce((sum, run) => sum + run.perSecond, 0) / baselines.length,
  lifetimePeakRssMb: Math.max(...baselines.map((run) => run.lifetimePeakRssMb ?? run.drainPeakRssMb)),
  problems: baselines.flatMap((run) => run.problems),
}
const ratio = large.perSecond / baseline.perSecond
const peakRssMb = large.lifetimePeakRssMb ?? large.drainPeakRssMb
const problems = [
  ...baseline.problems.map((p) => `${small} backlog: ${p}`),
  ...large.problems.map((p) => `${big} backlog: ${p}`),
]
const rounded = (run: Run) => ({
  backlog: run.backlog,
  seedSeconds: Number(run.seedSeconds.toFixed(1)),
  drainPerSecond: Math.round(run.perSecond),
  sustained: run.sustained && {
    perSecond: Math.round(run.sustained.perSecond),
    deliveries: run.sustained.count,
    seconds: Number(run.sustained.seconds.toFixed(2)),
  },
  startRssMb: run.startRssMb,
  drainPeakRssMb: run.drainPeakRssMb,
  lifetimePeakRssMb: run.lifetimePeakRssMb,
  memory: run.memory,
})
const result = {
  scenario: 'backlog',
  quick,
  machine: {
    ...machine(),
    loadAverage1m: { before: Number(loadBefore.toFixed(2)), after: Number(loadavg()[0]!.toFixed(2)) },
  },
  settings: { concurrency, skip, upto: small, spanMs },
  baseline: { ...rounded(baseline), rounds: baselines.map((run) => Math.round(run.perSecond)) },
  large: rounded(large),
  peakRssMb,
  ratio: Number(ratio.toFixed(3)),
  goals: { peakRssMb: rssGoalMb, ratio: 0.9 },
  pass: { peakRss: peakRssMb <= rssGoalMb, ratio: ratio >= 0.9 },
  problems,
}
/** What bench/results/backlog.json holds; the suite's figures are read from it (bench/lib/suite-scenarios.ts). */
export type BacklogResult = typeof result
const fmt = (n: number) => Math.round(n).toLocaleString('en')
console.log(
  [
    `Backlog benchmark (${result.machine.cpus} CPU cores, ${result.machine.model}, Node ${result.machine.node}${quick ? ', quick' : ''})`,
    '',
    `| Pending deliveries | stored in | drain rate, receipts ${fmt(skip)}–${fmt(small)} | ratio | sustained over ${spanMs / 1000} s | RSS at start | peak RSS (process life) |`,
    '|---|---:|---:|---:|---:|---:|---:|',
    ...[baseline, large].map(
      (run) =>
        `| ${fmt(run.backlog)} | ${run.seedSeconds.toFixed(1)} s | ${fmt(run.perSecond)}/s | ${(run.perSecond / baseline.perSecond).toFixed(2)} | ${run.sustained ? `${fmt(run.sustained.perSecond)}/s` : '—'} | ${run.startRssMb} MB | ${run.lifetimePeakRssMb ?? run.drainPeakRssMb} MB |`,
    ),
    '',
    `Goals: peak RSS ≤ ${rssGoalMb} MB → ${result.pass.peakRss ? 'pass' : 'short'}; drain ratio ≥ 0.9 → ${result.pass.ratio ? 'pass' : 'short'}${problems.length ? `\nDATA PROBLEMS:\n${problems.join('\n')}` : ''}`,
  ].join('\n'),
)
await mkdir(join(import.meta.dirname, 'results'), { recursive: true })
await writeFile(
  join(import.meta.dirname, 'results', quick ? 'backlog.quick.json' : 'backlog.json'),
  `${JSON.stringify(result, null, 2)}\n`,
)
if (problems.length > 0) process.exitCode = 1
