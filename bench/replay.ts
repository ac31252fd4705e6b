// npm run bench -- --only replay   or   node bench/replay.ts [--quick]
// Replay beside live traffic, in one run on one Sluice (SQLite) and one recording receiver:
// - Live: ack (Tracking API 200) → receipt p99 of live calls at 1,000 events/s while a replay of the
//   stored history to the same destination runs ÷ the same without a replay.
// - Replay: replayed messages/s while that live traffic runs ÷ the same replay with no live traffic
//   (the destination's idle throughput for replays).
// Each round measures the three phases in turn (live alone, replay alone, both), ratios within the
// round; the figures are the rounds' medians. Writes bench/results/replay.json (replay.quick.json).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Replay, Source as SourceView } from '../packages/server/src/api/index.ts'
import { latencies, percentile, sendPaced, startRecordingReceiver } from './lib/ack-to-receipt.ts'
import { machine, SLUICE_CLI, startProcess, stop } from './lib/processes.ts'

const quick = process.argv.includes('--quick')
/** Stored calls replayed in each replay: enough to outlast the live phase. */
const history = quick ? 10_000 : 40_000
const liveSeconds = quick ? 2 : 8
const warmupSeconds = 1
const rounds = quick ? 1 : 3
const ADMIN = 'bench-replay-token-0123456789'

interface Round {
  liveAloneP99Ms: number
  liveWithReplayP99Ms: number
  liveWithReplayP50Ms: number
  liveAloneP50Ms: number
  replayIdlePerSecond: number
  replayUnderLivePerSecond: number
  p99Ratio: number
  throughputRatio: number
}

const receiver = await startRecordingReceiver((body) => String(body.messageId))
const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-replay-'))
const { child, match } = await startProcess(
  [SLUICE_CLI, 'start'],
  /listening on (http:\/\/\S+)[\s\S]*curl -u '([^:]+):/,
  {
    SLUICE_DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'warn',
    SLUICE_ADMIN_TOKEN: ADMIN,
    SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
    // The history is stored before any replay starts; the default 10 s hold would only add a wait
    // for its last calls to each replay's time, which is not the rate this measures.
    SLUICE_REPLAY_HOLD_MS: '500',
  },
)
const base = match[1]!
const writeKey = match[2]!

async function api<View>(method: string, path: string, body?: unknown): Promise<View> {
  const response = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${ADMIN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
  return (await response.json()) as View
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const round2 = (value: number) => Number(value.toFixed(2))

/** Live calls at 1,000 events/s (10 every 10 ms); their steady-state ack → receipt p50 and p99. */
async function live(label: string): Promise<{ p50: number; p99: number }> {
  const acked = await sendPaced({
    base,
    writeKey,
    ticks: (warmupSeconds + liveSeconds) * 100,
    batchAt: (tick) =>
      Array.from({ length: 10 }, (_, i) => ({
        type: 'track',
        userId: 'u',
        event: 'Live',
        messageId: `${label}-${tick}-${i}`,
      })),
    keyOf: (call) => String(call.messageId),
  })
  // The receiver also holds the history's keys: wait for these calls themselves.
  for (const end = Date.now() + 15_000; Date.now() < end; await sleep(50)) {
    if ([...acked.keys()].every((key) => receiver.received.has(key))) break
  }
  const steady = [...acked].filter(([id]) => Number(id.split('-').at(-2)) >= warmupSeconds * 100)
  const values = latencies(steady, receiver.received)
  return { p50: percentile(values, 0.5), p99: percentile(values, 0.99) }
}

let destinationId = ''
let from = ''
let to = ''

/** A forced replay of the history (event `History`); its delivered messages/s over `seconds`, or until it ends. */
async function replay(whileRunning: Promise<unknown> | null): Promise<{ perSecond: number; replay: Replay }> {
  const started = await api<Replay>('POST', `/destinations/${destinationId}/replays`, {
    from,
    to,
    events: ['History'],
    force: true,
  })
  const startedAt = performance.now()
  let current = started
  let endedAt: number | null = null
  // Without live traffic: until it ends. With it: over the live phase (the history outlasts it).
  const watch = (async () => {
    for (;;) {
      await sleep(50)
      current = await api<Replay>('GET', `/destinations/${destinationId}/replays/${started.id}`)
      if (current.status !== 'RUNNING') {
        endedAt = performance.now()
        return
      }
    }
  })()
  if (whileRunning) {
    await whileRunning
    const at = performance.now()
    const now = await api<Replay>('GET', `/destinations/${destinationId}/replays/${started.id}`)
    const perSecond = now.delivered / ((Math.min(at, endedAt ?? at) - startedAt) / 1000)
    await api('DELETE', `/destinations/${destinationId}/replays/${started.id}`)
    await watch
    return { perSecond, replay: now }
  }
  await watch
  return {
    perSecond: current.delivered / (((endedAt ?? performance.now()) - startedAt) / 1000),
    replay: current,
  }
}

const results: Round[] = []
try {
  const { sources } = await api<{ sources: SourceView[] }>('GET', '/sources')
  const sourceId = sources[0]!.id
  // Disabled while the history arrives: it reaches the destination only through replays.
  const created = await api<{ id: string }>('POST', '/destinations', {
    name: 'replay bench',
    type: 'webhooks',
    enabled: false,
    sourceIds: [sourceId],
    settings: { webhooks: [{ url: `http://127.0.0.1:${receiver.port}/hook` }], sharedSecret: 'bench-secret' },
  })
  destinationId = created.id
  from = new Date(Date.now() - 1_000).toISOString()
  const authorization = `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`
  for (let at = 0; at < history; at += 500) {
    const batch = Array.from({ length: 500 }, (_, i) => ({
      type: 'track',
      userId: `u-${at + i}`,
      event: 'History',
      messageId: `history-${at + i}`,
      properties: { n: at + i },
    }))
    const response = await fetch(`${base}/v1/batch`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ batch }),
    })
    if (!response.ok) throw new Error(`seeding the history: ${response.status}`)
  }
  await sleep(50)
  to = new Date().toISOString()
  await api('PATCH', `/destinations/${destinationId}`, { enabled: true })

  for (let round = 0; round < rounds; round++) {
    const alone = await live(`alone${round}`)
    const idle = await replay(null)
    const both = live(`both${round}`)
    const underLive = await replay(both)
    const withReplay = await both
    results.push({
      liveAloneP50Ms: round2(alone.p50),
      liveAloneP99Ms: round2(alone.p99),
      liveWithReplayP50Ms: round2(withReplay.p50),
      liveWithReplayP99Ms: round2(withReplay.p99),
      replayIdlePerSecond: Math.round(idle.perSecond),
      replayUnderLivePerSecond: Math.round(underLive.perSecond),
      p99Ratio: round2(withReplay.p99 / alone.p99),
      throughputRatio: round2(underLive.perSecond / idle.perSecond),
    })
    console.error(`round ${round + 1}: ${JSON.stringify(results.at(-1))}`)
  }
} catch (error) {
  console.error(error)
  process.exitCode = 1
} finally {
  await stop(child)
  receiver.close()
  await rm(dataDir, { recursive: true, force: true })
}

const median = (values: number[]) => percentile(values, 0.5)
const result = {
  scenario: 'replay',
  quick,
  machine: machine(),
  history,
  eventsPerSecond: 1_000,
  liveSeconds,
  rounds: results,
  p99Ratio: median(results.map((r) => r.p99Ratio)),
  throughputRatio: median(results.map((r) => r.throughputRatio)),
  liveAloneP99Ms: median(results.map((r) => r.liveAloneP99Ms)),
  liveWithReplayP99Ms: median(results.map((r) => r.liveWithReplayP99Ms)),
  replayIdlePerSecond: median(results.map((r) => r.replayIdlePerSecond)),
  replayUnderLivePerSecond: median(results.map((r) => r.replayUnderLivePerSecond)),
  goals: { p99Ratio: 2, throughputRatio: 0.5 },
}
/** What bench/results/replay.json holds (bench/lib/suite-scenarios.ts reads it). */
export type ReplayResult = typeof result
console.log(
  [
    `Replay benchmark (${result.machine.cpus} CPU cores, Node ${result.machine.node}${quick ? ', quick' : ''})`,
    '',
    '| Figure | value | baseline | ratio | goal |',
    '|---|---:|---:|---:|---|',
    `| Live ack → receipt p99 at 1,000 events/s during a replay (ms) | ${result.liveWithReplayP99Ms} | ${result.liveAloneP99Ms} without | ${result.p99Ratio} | ≤ 2 ${result.p99Ratio <= 2 ? 'pass' : 'short'} |`,
    `| Replayed messages/s beside that live traffic | ${result.replayUnderLivePerSecond} | ${result.replayIdlePerSecond} idle | ${result.throughputRatio} | ≥ 0.5 ${result.throughputRatio >= 0.5 ? 'pass' : 'short'} |`,
  ].join('\n'),
)
await mkdir(join(import.meta.dirname, 'results'), { recursive: true })
await writeFile(
  join(import.meta.dirname, 'results', quick ? 'replay.quick.json' : 'replay.json'),
  `${JSON.stringify(result, null, 2)}\n`,
)
