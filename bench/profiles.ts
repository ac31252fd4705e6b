// npm run bench -- --only profiles   (or node bench/profiles.ts [--quick] [--parts creation,latency,ingest])
// --parts runs only the named measurements (for iterating on one of them) and only prints them.
// Profiles, computed traits and audiences:
// 1. Audience creation over 100,000 profiles / 1,000,000 calls: seconds until every member's identify
//    is enqueued, and the peak RSS of the process doing it (goals ≤ 10 s, ≤ 512 MB).
// 2. Real-time path: call accepted → membership identify received, p50 / p99 at 1,000 calls/s with 20
//    audiences and 20 computed traits defined (goals ≤ 50 ms / ≤ 500 ms).
// 3. Ingest throughput with those 20 + 20 defined ÷ with none (goal ≥ 0.7).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type {
  Audience as AudienceView,
  ComputedTrait as ComputedTraitView,
  Destination as DestinationView,
  Source as SourceView,
} from '../packages/server/src/api/index.ts'
import {
  awaitReceipts,
  latencies,
  percentile,
  sendPaced,
  startRecordingReceiver,
} from './lib/ack-to-receipt.ts'
import { machine, runJson, SLUICE_CLI, startProcess, stop } from './lib/processes.ts'

const quick = process.argv.includes('--quick')
const profiles = quick ? 10_000 : 100_000
const callsPerProfile = 10
const latencySeconds = quick ? 2 : 10
const warmupSeconds = 1
const ingestMs = quick ? 1_500 : 6_000
const loadGenerator = join(import.meta.dirname, 'lib/load-generator.ts')
const partsAt = process.argv.indexOf('--parts')
const parts = new Set(
  partsAt >= 0 ? (process.argv[partsAt + 1] ?? '').split(',') : ['creation', 'latency', 'ingest'],
)

interface Started {
  base: string
  writeKey: string
  sourceId: string
  stop(): Promise<void>
}

async function startSluice(): Promise<Started> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-profiles-'))
  const { child, match } = await startProcess(
    [SLUICE_CLI, 'start'],
    /listening on (http:\/\/\S+)[\s\S]*curl -u '([^:]+):/,
    {
      SLUICE_DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'warn',
      SLUICE_ADMIN_TOKEN: 'bench-admin-token-0123456789',
      SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
    },
  )
  const base = match[1]!
  const sources = (await (
    await fetch(`${base}/api/v1/sources`, {
      headers: { authorization: 'Bearer bench-admin-token-0123456789' },
    })
  ).json()) as { sources: SourceView[] }
  return {
    base,
    writeKey: match[2]!,
    sourceId: sources.sources[0]!.id,
    async stop() {
      await stop(child)
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}

/** Creates a resource through the management API; `View` is what the route answers (the server's API types, packages/server/src/api/). */
async function api<View>(base: string, path: string, body: unknown): Promise<View> {
  const response = await fetch(`${base}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: 'Bearer bench-admin-token-0123456789', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (response.status !== 201) throw new Error(`POST ${path} failed: ${await response.text()}`)
  return (await response.json()) as View
}

/** 20 computed traits and 20 audiences, the last audience (every caller of `Latency`) with `destinationId`. */
async function defineComputations(base: string, destinationId: string | null): Promise<void> {
  const kinds = [
    'count',
    'sum',
    'avg',
    'min',
    'max',
    'first',
    'last',
    'most_frequent',
    'unique_list',
    'unique_list_count',
  ]
  for (let i = 0; i < 20; i++) {
    const kind = kinds[i % kinds.length]!
    await api<ComputedTraitView>(base, '/computed-traits', {
      name: `Trait ${i}`,
      kind,
      event: i % 2 === 0 ? 'Order Completed' : 'Latency',
      ...(kind === 'count' ? {} : { property: 'total' }),
      ...(i % 3 === 0 ? { withinDays: 30 } : {}),
    })
  }
  for (let i = 0; i < 19; i++) {
    await api<AudienceView>(base, '/audiences', {
      name: `Audience ${i}`,
      definition: {
        all: [
          {
            event: i % 2 === 0 ? 'Order Completed' : 'Latency',
            count: { op: '>=', value: 1 + (i % 3) },
            withinDays: 30,
          },
          { not: { trait: 'plan', op: '=', value: 'free' } },
        ],
      },
    })
  }
  await api<AudienceView>(base, '/audiences', {
    name: 'Latency Callers',
    definition: { event: 'Latency' },
    ...(destinationId ? { destinationIds: [destinationId] } : {}),
  })
}

async function measureCreation() {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-audience-'))
  try {
    const seed = await runJson<{ seedSeconds: number; consumeSeconds: number }>([
      join(import.meta.dirname, 'lib/profiles-seed.ts'),
      dataDir,
      String(profiles),
      String(callsPerProfile),
    ])
    const created = await runJson<{
      seconds: number
      members: number
      deliveries: number
      peakRssMb: number
    }>([join(import.meta.dirname, 'lib/profiles-create.ts'), dataDir])
    return { ...seed, ...created }
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
}

async function measureLatency() {
  const receiver = await startRecordingReceiver((body) => String(body.userId))
  const sluice = await startSluice()
  let acked = new Map<string, number>()
  try {
    const destination = await api<DestinationView>(sluice.base, '/destinations', {
      name: 'audience receiver',
      type: 'webhooks',
      sourceIds: [],
      settings: {
        webhooks: [{ url: `http://127.0.0.1:${receiver.port}/hook` }],
        sharedSecret: 'bench-secret',
      },
    })
    await defineComputations(sluice.base, destination.id)
    // 10 calls every 10 ms = 1,000 calls/s, each by a new user: each makes one user enter the audience.
    acked = await sendPaced({
      base: sluice.base,
      writeKey: sluice.writeKey,
      ticks: (warmupSeconds + latencySeconds) * 100,
      batchAt: (tick) =>
        Array.from({ length: 10 }, (_, i) => ({
          type: 'track',
          userId: `lat-${tick}-${i}`,
          event: 'Latency',
          properties: { total: i },
        })),
      keyOf: (call) => String(call.userId),
    })
    await awaitReceipts(acked, receiver.received, 30_000)
  } finally {
    await sluice.stop()
    receiver.close()
  }
  const steady = latencies(
    [...acked].filter(([id]) => Number(id.split('-')[1]) >= warmupSeconds * 100),
    receiver.received,
  )
  return {
    p50: percentile(steady, 0.5),
    p99: percentile(steady, 0.99),
    count: steady.length,
    missing: acked.size - receiver.received.size,
  }
}

async function measureIngest(withComputations: boolean): Promise<number> {
  const sluice = await startSluice()
  try {
    if (withComputations) await defineComputations(sluice.base, null)
    const url = `${sluice.base}/v1/batch`
    await runJson([loadGenerator, url, sluice.writeKey, '20', '32', '500'])
    const load = await runJson<{ eventsPerSecond: number }>([
      loadGenerator,
      url,
      sluice.writeKey,
      '20',
      '32',
      String(ingestMs),
    ])
    return load.eventsPerSecond
  } finally {
    await sluice.stop()
  }
}

const skipped = {
  seconds: Number.NaN,
  members: 0,
  deliveries: 0,
  peakRssMb: Number.NaN,
  seedSeconds: Number.NaN,
  consumeSeconds: Number.NaN,
}
const creation = parts.has('creation') ? await measureCreation() : skipped
const latency = parts.has('latency')
  ? await measureLatency()
  : { p50: Number.NaN, p99: Number.NaN, count: 0, missing: 0 }
const ingestNone = parts.has('ingest') ? await measureIngest(false) : Number.NaN
const ingestWith = parts.has('ingest') ? await measureIngest(true) : Number.NaN
const ingestRatio = ingestWith / ingestNone
const result = {
  scenario: 'profiles',
  quick,
  machine: machine(),
  creation: { profiles, calls: profiles * callsPerProfile, ...creation },
  latency: {
    callsPerSecond: 1_000,
    seconds: latencySeconds,
    p50Ms: Number(latency.p50.toFixed(1)),
    p99Ms: Number(latency.p99.toFixed(1)),
    calls: latency.count,
    missing: latency.missing,
  },
  ingest: {
    withNoneEventsPerSecond: Math.round(ingestNone),
    with20And20EventsPerSecond: Math.round(ingestWith),
    ratio: Number(ingestRatio.toFixed(3)),
  },
  goals: { creationSeconds: 10, peakRssMb: 512, p50Ms: 50, p99Ms: 500, ingestRatio: 0.7 },
}
/** What bench/results/profiles.json holds; the suite's figures are read from it (bench/lib/suite-scenarios.ts). */
export type ProfilesResult = typeof result
const mark = (ok: boolean) => (ok ? 'pass' : 'short')
console.log(
  [
    `Profiles benchmark (${result.machine.cpus} CPU cores, ${result.machine.model}, Node ${result.machine.node}${quick ? ', quick' : ''})`,
    '',
    '| Figure | value | goal |',
    '|---|---:|---|',
    `| Audience creation over ${profiles.toLocaleString('en')} profiles / ${(profiles * callsPerProfile).toLocaleString('en')} calls: every member's identify enqueued (${creation.members.toLocaleString('en')} members) | ${creation.seconds} s | ≤ 10 s ${mark(creation.seconds <= 10)} |`,
    `| Peak RSS of that process | ${creation.peakRssMb} MB | ≤ 512 MB ${mark(creation.peakRssMb <= 512)} |`,
    `| Call accepted → membership identify received, p50 at 1,000 calls/s (20 audiences, 20 computed traits) | ${result.latency.p50Ms} ms | ≤ 50 ms ${mark(latency.p50 <= 50)} |`,
    `| The same, p99 | ${result.latency.p99Ms} ms | ≤ 500 ms ${mark(latency.p99 <= 500)} |`,
    `| Ingest events/s with 20 + 20 defined ÷ with none (${result.ingest.with20And20EventsPerSecond} / ${result.ingest.withNoneEventsPerSecond}) | ${result.ingest.ratio} | ≥ 0.7 ${mark(ingestRatio >= 0.7)} |`,
    '',
    `Seeding (not measured against a goal): ${creation.seedSeconds} s to store the calls, ${creation.consumeSeconds} s for the profile worker to consume them.`,
  ].join('\n'),
)
if (partsAt < 0) {
  await mkdir(join(import.meta.dirname, 'results'), { recursive: true })
  await writeFile(
    join(import.meta.dirname, 'results', quick ? 'profiles.quick.json' : 'profiles.json'),
    `${JSON.stringify(result, null, 2)}\n`,
  )
}
