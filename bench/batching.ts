// npm run bench -- --only batching   or   node bench/batching.ts [--quick]
// Batching: messages delivered per second from a stored backlog to a no-op receiver with
// `settings.batching` at 100 messages per request, against the same backlog delivered one message per
// request (the classic destination), in the same run: rounds alternate the two (ABBA), and the figure
// is the median of the rounds' ratios. Both drains are bench/lib/drain-backlog.ts (signed, recorded,
// every delivery counted as delivered in the store). Writes bench/results/batching.json
// (batching.quick.json with --quick).
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { percentile } from './lib/ack-to-receipt.ts'
import { machine, runJson, startProcess, stop } from './lib/processes.ts'

const quick = process.argv.includes('--quick')
const backlog = quick ? 5_000 : 50_000
const rounds = quick ? 1 : 3
const concurrency = 32
const batchSize = 100

interface Drain {
  count: number
  seconds: number
  perSecond: number
  peakRssMb?: number
}

const { child, match } = await startProcess([join(import.meta.dirname, 'lib/noop-server.ts')], /^(\d+)$/m)
const pairs: { classic: Drain; batched: Drain; ratio: number }[] = []
try {
  const url = `http://127.0.0.1:${match[1]}/hook`
  const drain = (batched: boolean) =>
    runJson<Drain>([
      join(import.meta.dirname, 'lib/drain-backlog.ts'),
      url,
      String(backlog),
      String(concurrency),
      'on',
      ...(batched ? [String(batchSize)] : []),
    ])
  for (let round = 0; round < rounds; round++) {
    // ABBA: whichever went second last time goes first, so a shared machine's slow spells fall on both.
    let classic: Drain
    let batched: Drain
    if (round % 2 === 0) {
      classic = await drain(false)
      batched = await drain(true)
    } else {
      batched = await drain(true)
      classic = await drain(false)
    }
    pairs.push({ classic, batched, ratio: batched.perSecond / classic.perSecond })
  }
} finally {
  await stop(child)
}
const ratio = percentile(
  pairs.map((pair) => pair.ratio),
  0.5,
)
const middle = pairs.find((pair) => pair.ratio === ratio) ?? pairs[0]!
const result = {
  scenario: 'batching',
  quick,
  machine: machine(),
  backlog,
  concurrency,
  batchSize,
  classic: { perSecond: Math.round(middle.classic.perSecond), peakRssMb: middle.classic.peakRssMb },
  batched: { perSecond: Math.round(middle.batched.perSecond), peakRssMb: middle.batched.peakRssMb },
  ratio: Number(ratio.toFixed(2)),
  roundRatios: pairs.map((pair) => Number(pair.ratio.toFixed(2))),
  goals: { ratio: 5 },
}
/** What bench/results/batching.json holds (bench/lib/suite-scenarios.ts reads it). */
export type BatchingResult = typeof result
console.log(
  [
    `Batching benchmark (${result.machine.cpus} CPU cores, Node ${result.machine.node}${quick ? ', quick' : ''})`,
    '',
    '| Figure | value | baseline | ratio | goal |',
    '|---|---:|---:|---:|---|',
    `| Messages delivered/s from a ${backlog.toLocaleString('en')} backlog, ${batchSize} per request | ${result.batched.perSecond} | ${result.classic.perSecond} one per request | ${result.ratio} | ≥ 5 ${ratio >= 5 ? 'pass' : 'short'} |`,
  ].join('\n'),
)
await mkdir(join(import.meta.dirname, 'results'), { recursive: true })
await writeFile(
  join(import.meta.dirname, 'results', quick ? 'batching.quick.json' : 'batching.json'),
  `${JSON.stringify(result, null, 2)}\n`,
)
