// npm run bench:ingest [-- --quick]
// Durable events/s through Sluice's /v1/batch (20 events a request) against the raw loopback HTTP
// limit: a no-op Node HTTP server under the same load, measured in the same run.
import type { ChildProcess } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { machine, runJson, SLUICE_CLI, startProcess, stop } from './lib/processes.ts'
import type { StoreFloor } from './lib/store-floor.ts'
import { measureThreadCpu, type ThreadCpu } from './lib/thread-cpu.ts'

const quick = process.argv.includes('--quick')
const durationMs = quick ? 1_500 : 8_000
/** Rounds of no-op server, bare floor and Sluice, their order rotated from round to round. */
const roundCount = quick ? 1 : 3
const connections = 32
const perRequest = 20
const loadGenerator = join(import.meta.dirname, 'lib/load-generator.ts')

interface LoadResult {
  requests: number
  events: number
  errors: number
  statuses: Record<string, number>
  seconds: number
  eventsPerSecond: number
  /** The load generator's own CPU over the run. */
  cpuMs: number
}

interface Measured extends LoadResult {
  /** The server process's CPU over the same run, by thread kind. */
  server: ThreadCpu | null
  /**
   * Sluice only: calls stored but not yet in profiles when the load stopped. Profiles are kept
   * current from every call; a rate bought by letting them fall behind is not a rate, so this is
   * checked (a data problem past one second of calls).
   */
  profileLag?: number
}

/** Microseconds of CPU per request: where the budget goes (the machine's cores are shared by all). */
function cpuPerRequest(run: Measured) {
  const us = (ms: number) => Math.round((ms * 1000) / Math.max(1, run.requests))
  return {
    loadGenerator: us(run.cpuMs),
    server: run.server ? us(run.server.totalMs) : null,
    serverMainThread: run.server ? us(run.server.byKind.main) : null,
    serverStoreThread: run.server ? us(run.server.byKind.workers) : null,
    serverV8Helpers: run.server ? us(run.server.byKind.v8) : null,
  }
}

/** A server under test, started and ready: where to send, with which write key. */
interface Started {
  child: ChildProcess
  url: string
  writeKey: string
  cleanup?: () => Promise<void>
  /** Sluice only: its database file, read (as any reader may) for the profile lag. */
  databasePath?: string
}

/** Warms `server` up for 500 ms, then measures it under the load for `durationMs`. */
async function measure(server: Started): Promise<Measured> {
  try {
    const args = (ms: number) => [
      loadGenerator,
      server.url,
      server.writeKey,
      String(perRequest),
      String(connections),
      String(ms),
    ]
    await runJson<LoadResult>(args(500))
    const cpu = measureThreadCpu(server.child.pid!)
    const load = await runJson<LoadResult>(args(durationMs))
    const measured: Measured = { ...load, server: cpu() }
    if (server.databasePath) measured.profileLag = profileLag(server.databasePath)
    return measured
  } finally {
    await stop(server.child)
    await server.cleanup?.()
  }
}

/** Calls past the profile cursor, read from another connection right after the load. */
function profileLag(databasePath: string): number {
  const db = new DatabaseSync(databasePath, { readOnly: true })
  try {
    const row = db
      .prepare(
        'SELECT (SELECT coalesce(max(pk), 0) FROM messages) - (SELECT high_pk FROM profile_cursor) AS lag',
      )
      .get() as { lag: number }
    return row.lag
  } finally {
    db.close()
  }
}

async function startNoop(): Promise<Started> {
  const { child, match } = await startProcess([join(import.meta.dirname, 'lib/noop-server.ts')], /^(\d+)$/m)
  return { child, url: `http://127.0.0.1:${match[1]}/v1/batch`, writeKey: 'k' }
}

/** `profiles`: the floor that also keeps a profile per user from every call (ingest-floor-server.ts). */
async function startFloor(mode: '' | 'profiles' = ''): Promise<Started> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-floor-'))
  const { child, match } = await startProcess(
    [join(import.meta.dirname, 'lib/ingest-floor-server.ts'), join(dataDir, 'floor.db'), 'k', mode],
    /^(\d+)$/m,
  )
  return {
    child,
    url: `http://127.0.0.1:${match[1]}/v1/batch`,
    writeKey: 'k',
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
  }
}

/**
 * `role` `api` runs the Tracking and management APIs without the worker (no profile upkeep, no
 * delivery engine; this scenario has no destinations, so only the profiles' work is left out).
 */
async function startSluice(
  synchronous: 'FULL' | 'NORMAL',
  metrics = true,
  role: 'all' | 'api' = 'all',
): Promise<Started> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-'))
  const { child, match } = await startProcess(
    [SLUICE_CLI, 'start'],
    /listening on (http:\/\/\S+)[\s\S]*curl -u '([^:]+):/,
    {
      SLUICE_DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'warn',
      SLUICE_SQLITE_SYNCHRONOUS: synchronous,
      SLUICE_METRICS: String(metrics),
      SLUICE_ROLE: role,
    },
  )
  return {
    child,
    url: `${match[1]}/v1/batch`,
    writeKey: match[2]!,
    cleanup: () => rm(dataDir, { recursive: true, force: true }),
    // The api role keeps no profiles: there is no lag to read.
    ...(role === 'all' ? { databasePath: join(dataDir, 'sluice.db') } : {}),
  }
}

const measureSluice = async (synchronous: 'FULL' | 'NORMAL', metrics = true) =>
  measure(await startSluice(synchronous, metrics))

// The main figures: the no-op server, the bare durable floor and Sluice, in rounds whose order rotates
// (round 1: no-op, floor, Sluice, …; round 2: floor, Sluice, …, no-op; …) so that none of them always
// meets the machine as another left it. Each ratio is taken within a round, and the median round
// reported with the spread of all of them. The fourth party, Sluice without profile upkeep, shows what
// bounds the goal's figure: the floor keeps no profiles, Sluice keeps them current from every call. The
// fifth, the floor keeping a profile per user in the same commit, prices the least such upkeep costs.
const parties = {
  noop: startNoop,
  floor: () => startFloor(),
  sluice: () => startSluice('FULL'),
  noProfiles: () => startSluice('FULL', true, 'api'),
  profileFloor: () => startFloor('profiles'),
} as const
type Party = keyof typeof parties
const order: Party[] = ['noop', 'floor', 'sluice', 'noProfiles', 'profileFloor']
const rounds: Record<Party, Measured>[] = []
for (let round = 0; round < roundCount; round++) {
  const measured: Partial<Record<Party, Measured>> = {}
  for (let i = 0; i < order.length; i++) {
    const party = order[(i + round) % order.length]!
    measured[party] = await measure(await parties[party]())
  }
  rounds.push(measured as Record<Party, Measured>)
}
const perSecond = (run: Measured) => run.eventsPerSecond
const roundRatios = rounds.map((round) => ({
  sluiceToFloor: perSecond(round.sluice) / perSecond(round.floor),
  sluiceToNoop: perSecond(round.sluice) / perSecond(round.noop),
  floorToNoop: perSecond(round.floor) / perSecond(round.noop),
  noProfilesToFloor: perSecond(round.noProfiles) / perSecond(round.floor),
  sluiceToProfileFloor: perSecond(round.sluice) / perSecond(round.profileFloor),
  profileFloorToFloor: perSecond(round.profileFloor) / perSecond(round.floor),
}))
// The round whose Sluice ÷ floor ratio is the median: its runs are the ones reported in detail.
const medianRound =
  rounds[
    roundRatios
      .map((ratios, index) => ({ ratio: ratios.sluiceToFloor, index }))
      .sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)]!.index
  ]!
const baseline = medianRound.noop
const floor = medianRound.floor
const full = medianRound.sluice
const noProfiles = medianRound.noProfiles
const profileFloor = medianRound.profileFloor
/** The median of the rounds' values of one ratio, and its spread over the rounds. */
function spreadOf(pick: (ratios: (typeof roundRatios)[number]) => number) {
  const values = roundRatios.map(pick).sort((a, b) => a - b)
  const round3 = (value: number) => Number(value.toFixed(3))
  return {
    median: round3(values[Math.floor(values.length / 2)]!),
    min: round3(values[0]!),
    max: round3(values.at(-1)!),
    rounds: values.length,
  }
}
const normal = await measureSluice('NORMAL')
// The cost of metrics: pairs of durable runs with metrics off (SLUICE_METRICS=false) and on, back to
// back, the order alternating from pair to pair (off first, then on first, …) so that neither side
// always meets the machine as the other left it. The figure is the median of the pairs' ratios; CPU
// per request, on and off, is the steadier view of the same cost.
const metricsPairs: { on: Measured; off: Measured }[] = []
for (let pair = 0; pair < (quick ? 1 : 3); pair++) {
  const onFirst = pair % 2 === 1
  const first = await measureSluice('FULL', onFirst)
  const second = await measureSluice('FULL', !onFirst)
  metricsPairs.push(onFirst ? { on: first, off: second } : { on: second, off: first })
}
const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const metricsOff = metricsPairs[0]!.off
const metricsRatio = median(metricsPairs.map(({ on, off }) => on.eventsPerSecond / off.eventsPerSecond))
const serverCpu = (run: Measured) =>
  run.server ? run.server.totalMs / Math.max(1, run.requests) : Number.NaN
const metricsCpuRatio = median(metricsPairs.map(({ on, off }) => serverCpu(off) / serverCpu(on)))
const toNoop = spreadOf((ratios) => ratios.sluiceToNoop)
const toFloor = spreadOf((ratios) => ratios.sluiceToFloor)
const floorToNoop = spreadOf((ratios) => ratios.floorToNoop)
const noProfilesToFloor = spreadOf((ratios) => ratios.noProfilesToFloor)
const toProfileFloor = spreadOf((ratios) => ratios.sluiceToProfileFloor)
const profileFloorToFloor = spreadOf((ratios) => ratios.profileFloorToFloor)
// Every durable Sluice run with profiles: the most calls left waiting for profiles when a load stopped,
// against one second of that run's calls.
const profiledRuns = [
  ...rounds.map((round) => round.sluice),
  normal,
  ...metricsPairs.flatMap(({ on, off }) => [on, off]),
]
const worstLag = profiledRuns
  .map((run) => ({ lag: run.profileLag ?? Number.NaN, perSecond: run.eventsPerSecond }))
  .sort((a, b) => b.lag / b.perSecond - a.lag / a.perSecond)[0]!
const ratio = toNoop.median
const spread = (s: { min: number; max: number; rounds: number }) =>
  `${s.rounds} round(s), ${s.min.toFixed(2)}–${s.max.toFixed(2)}`
// The budget: on two shared cores the rate is about 2 cores ÷ (server + load generator CPU per request),
// so the ratio is about (no-op server + its load generator) ÷ (Sluice + its load generator), and 0.5
// leaves Sluice at most 2 × (no-op server + its load generator) − Sluice's load generator a request.
// Counted generously: as if Sluice's load generator cost what the no-op server's does (it costs more
// a request at Sluice's lower rate, where each wake-up handles fewer answers).
// The floor: what storing the request's calls costs the store alone (bench/lib/store-floor.ts).
const storeFloor = await runJson<StoreFloor>([
  join(import.meta.dirname, 'lib/store-floor.ts'),
  'ingest',
  ...(quick ? ['--quick'] : []),
])
const perRequestCpu = {
  baseline: cpuPerRequest(baseline),
  floor: cpuPerRequest(floor),
  sluice: cpuPerRequest(full),
  noProfiles: cpuPerRequest(noProfiles),
  profileFloor: cpuPerRequest(profileFloor),
}
const budget = {
  /** The most Sluice's CPU per request may be for ratio 0.5 on this machine (its load generator counted at the no-op's cost). */
  sluiceUsPerRequest:
    2 * (perRequestCpu.baseline.server ?? Number.NaN) + perRequestCpu.baseline.loadGenerator,
  /** `SqliteStore.ingest` alone, per request of `perRequest` calls. */
  storeFloorUsPerRequest: Math.round(storeFloor.cpuUs * perRequest),
  storeFloor,
}
const result = {
  scenario: 'ingest',
  quick,
  machine: machine(),
  load: { connections, eventsPerRequest: perRequest, durationMs },
  baseline: { name: 'no-op Node HTTP server', eventsPerSecond: Math.round(baseline.eventsPerSecond) },
  /** The bare durable ingest (bench/lib/ingest-floor-server.ts), in the same rounds. */
  floor: { eventsPerSecond: Math.round(floor.eventsPerSecond), errors: floor.errors },
  /** The same floor keeping a profile per user from every call, in the same commit (reported). */
  profileFloor: { eventsPerSecond: Math.round(profileFloor.eventsPerSecond), errors: profileFloor.errors },
  /** Every round's events/s, in the order measured, and the ratios' medians and spreads. */
  rounds: rounds.map((round) => ({
    noop: Math.round(round.noop.eventsPerSecond),
    floor: Math.round(round.floor.eventsPerSecond),
    sluice: Math.round(round.sluice.eventsPerSecond),
    noProfiles: Math.round(round.noProfiles.eventsPerSecond),
    profileFloor: Math.round(round.profileFloor.eventsPerSecond),
  })),
  ratios: {
    sluiceToFloor: toFloor,
    sluiceToNoop: toNoop,
    floorToNoop,
    noProfilesToFloor,
    sluiceToProfileFloor: toProfileFloor,
    profileFloorToFloor,
  },
  sluice: {
    synchronousFull: {
      eventsPerSecond: Math.round(full.eventsPerSecond),
      errors: full.errors,
      statuses: full.statuses,
    },
    synchronousNormal: { eventsPerSecond: Math.round(normal.eventsPerSecond), errors: normal.errors },
    metricsOff: { eventsPerSecond: Math.round(metricsOff.eventsPerSecond), errors: metricsOff.errors },
    /** The Tracking API alone (SLUICE_ROLE=api): what the profiles' upkeep costs the rate. */
    noProfiles: { eventsPerSecond: Math.round(noProfiles.eventsPerSecond), errors: noProfiles.errors },
  },
  /**
   * The most calls any durable run with profiles left waiting for them when its load stopped, and
   * that run's calls a second: profiles kept up when the first is well below the second.
   */
  profileLag: { calls: worstLag.lag, callsPerSecond: Math.round(worstLag.perSecond) },
  metricsRatio: Number(metricsRatio.toFixed(3)),
  metricsPairs: metricsPairs.map(({ on, off }) => ({
    onEventsPerSecond: Math.round(on.eventsPerSecond),
    offEventsPerSecond: Math.round(off.eventsPerSecond),
  })),
  /** Server CPU per request with metrics off ÷ on (median of the pairs): 1 means metrics cost no CPU. */
  metricsCpuRatio: Number(metricsCpuRatio.toFixed(3)),
  cpuPerRequestUs: perRequestCpu,
  budget,
  /** Sluice ÷ no-op server (median round): reported. */
  ratio,
  /** Sluice ÷ the bare durable floor (median round): the goal. */
  floorRatio: toFloor.median,
  goal: 0.5,
  pass: toFloor.median >= 0.5,
}
/** What bench/results/ingest.json holds; the suite's figures are read from it (bench/lib/suite-scenarios.ts). */
export type IngestResult = typeof result

const table = [
  `Ingest benchmark (${result.machine.cpus} CPU cores, ${result.machine.model}, Node ${result.machine.node}${quick ? ', quick' : ''})`,
  '',
  '| Figure | events/s | ratio to baseline |',
  '|---|---:|---:|',
  `| Baseline: no-op Node HTTP server, same load | ${result.baseline.eventsPerSecond} | 1.00 |`,
  `| Bare durable ingest floor (no Sluice code; fsynced group commits) | ${result.floor.eventsPerSecond} | ${floorToNoop.median.toFixed(2)} (${spread(floorToNoop)}) |`,
  `| Sluice /v1/batch, durable (SQLite synchronous=FULL, default) | ${result.sluice.synchronousFull.eventsPerSecond} | ${ratio.toFixed(2)} (${spread(toNoop)}) |`,
  `| Sluice /v1/batch, durable, metrics off (SLUICE_METRICS=false) | ${result.sluice.metricsOff.eventsPerSecond} | ${(metricsOff.eventsPerSecond / baseline.eventsPerSecond).toFixed(2)} |`,
  `| Sluice /v1/batch (SQLite synchronous=NORMAL) | ${result.sluice.synchronousNormal.eventsPerSecond} | ${(normal.eventsPerSecond / baseline.eventsPerSecond).toFixed(2)} |`,
  `| Sluice /v1/batch without profile upkeep (SLUICE_ROLE=api) | ${result.sluice.noProfiles.eventsPerSecond} | ${(noProfiles.eventsPerSecond / baseline.eventsPerSecond).toFixed(2)}; ÷ floor ${noProfilesToFloor.median.toFixed(2)} (${spread(noProfilesToFloor)}) |`,
  `| Bare floor keeping a profile per user (event row and profile row in the same commit) | ${result.profileFloor.eventsPerSecond} | ${(profileFloor.eventsPerSecond / baseline.eventsPerSecond).toFixed(2)}; ÷ floor ${profileFloorToFloor.median.toFixed(2)} (${spread(profileFloorToFloor)}); Sluice ÷ it ${toProfileFloor.median.toFixed(2)} (${spread(toProfileFloor)}) |`,
  '',
  `CPU per request (µs, ${perRequest} events): no-op server ${result.cpuPerRequestUs.baseline.server ?? '—'} + load generator ${result.cpuPerRequestUs.baseline.loadGenerator}; ` +
    `Sluice ${result.cpuPerRequestUs.sluice.server ?? '—'} (main thread ${result.cpuPerRequestUs.sluice.serverMainThread ?? '—'}, store thread ${result.cpuPerRequestUs.sluice.serverStoreThread ?? '—'}, V8 helpers ${result.cpuPerRequestUs.sluice.serverV8Helpers ?? '—'}) + load generator ${result.cpuPerRequestUs.sluice.loadGenerator}`,
  `Budget for ratio 0.5: Sluice at most ${budget.sluiceUsPerRequest} µs of CPU a request; storing its ${perRequest} calls alone (SqliteStore.ingest, ${storeFloor.perCommit}-call fsynced commits, no HTTP or parsing) takes ${budget.storeFloorUsPerRequest} µs (${storeFloor.cpuUs} µs a call).`,
  `CPU per request of the bare floor: ${result.cpuPerRequestUs.floor.server ?? '—'} µs (main thread ${result.cpuPerRequestUs.floor.serverMainThread ?? '—'}, store thread ${result.cpuPerRequestUs.floor.serverStoreThread ?? '—'})`,
  `CPU per request of Sluice without profile upkeep: ${result.cpuPerRequestUs.noProfiles.server ?? '—'} µs (main thread ${result.cpuPerRequestUs.noProfiles.serverMainThread ?? '—'}, store thread ${result.cpuPerRequestUs.noProfiles.serverStoreThread ?? '—'})`,
  `CPU per request of the floor keeping profiles: ${result.cpuPerRequestUs.profileFloor.server ?? '—'} µs (main thread ${result.cpuPerRequestUs.profileFloor.serverMainThread ?? '—'}, store thread ${result.cpuPerRequestUs.profileFloor.serverStoreThread ?? '—'})`,
  `Profiles kept up: at most ${result.profileLag.calls} calls waiting for them when a load stopped (that run took ${result.profileLag.callsPerSecond} calls/s)`,
  `Goal: Sluice ÷ bare floor ≥ 0.5: ${toFloor.median.toFixed(2)} (median of ${spread(toFloor)}) → ${result.pass ? 'pass' : 'short'}`,
  `Metrics on ÷ off: ${metricsRatio.toFixed(2)} events/s, median of ${metricsPairs.length} alternating pair(s) (goal ≥ 0.97 → ${metricsRatio >= 0.97 ? 'pass' : 'short'}); server CPU per request off ÷ on ${metricsCpuRatio.toFixed(2)}`,
].join('\n')
console.log(table)
if (full.errors > 0) console.log(`Sluice errors: ${JSON.stringify(full.statuses)}`)
if (floor.errors > 0) console.log(`Floor errors: ${JSON.stringify(floor.statuses)}`)
if (profileFloor.errors > 0)
  console.log(`Floor keeping profiles errors: ${JSON.stringify(profileFloor.statuses)}`)
if (noProfiles.errors > 0)
  console.log(`Sluice without profiles errors: ${JSON.stringify(noProfiles.statuses)}`)
await mkdir(join(import.meta.dirname, 'results'), { recursive: true })
await writeFile(
  join(import.meta.dirname, 'results', quick ? 'ingest.quick.json' : 'ingest.json'),
  `${JSON.stringify(result, null, 2)}\n`,
)
