// The scenarios of `npm run bench` (bench/run.ts): which script runs each, where its JSON result is,
// and how that result becomes the suite's figures (value, baseline, ratio, goal, pass/short) and its
// data problems (a scenario that lost or duplicated data fails the suite; a figure short of its goal
// does not).
import type { BacklogResult } from '../backlog.ts'
import type { BatchingResult } from '../batching.ts'
import type { ClientResult } from '../client.ts'
import type { DeliverResult } from '../deliver.ts'
import type { FootprintResult } from '../footprint.ts'
import type { IngestResult } from '../ingest.ts'
import type { IsolationResult } from '../isolation.ts'
import type { PostgresResult } from '../postgres.ts'
import type { PrivacyResult } from '../privacy.ts'
import type { ProfilesResult } from '../profiles.ts'
import type { ReplayResult } from '../replay.ts'
import type { SubscriptionsResult } from '../subscriptions.ts'

export interface Figure {
  figure: string
  value: number | null
  unit: string
  /** The baseline measured in the same run, and what it is. */
  baseline: { name: string; value: number | null; unit: string } | null
  ratio: number | null
  /** Human-readable goal, e.g. "ratio ≥ 0.5"; "reported" when there is none. */
  goal: string
  /** null: no goal (reported only), or the figure is missing. */
  pass: boolean | null
}

export interface Summary {
  figures: Figure[]
  problems: string[]
}

export interface Scenario {
  id: string
  title: string
  script: string
  extraArgs?: (quick: boolean) => string[]
  /** The result file's base name: bench/results/<result>.json, or <result>.quick.json. */
  result: string
  /** Wall-clock limit for the script, ms. */
  timeoutMs: (quick: boolean) => number
  /** Environment the scenario needs; a reason to skip it when absent (reported, not failed). */
  precheck?: () => Promise<string | null>
  /** The figures and data problems of the JSON the script wrote (parsed, not yet checked). */
  summarize(result: unknown): Summary
}

/**
 * A scenario's result as read back from the JSON file its script wrote: the script's own result type
 * (exported next to where it builds it), except that any part may be missing (a file written by an
 * older script, re-rendered with `--render`) and any number may be null (JSON has no NaN or Infinity:
 * a figure that could not be measured).
 */
type Stored<T> = T extends number
  ? number | null
  : T extends readonly (infer Item)[]
    ? Stored<Item>[]
    : T extends object
      ? { [K in keyof T]?: Stored<T[K]> }
      : T

/**
 * A scenario whose `summarize` reads its script's result type: the one place a result file's parsed
 * JSON is taken as that type, as `Stored` (every part optional, every number nullable), so `summarize`
 * must say what a missing part or a number that is not one becomes.
 */
function scenario<Result>(
  definition: Omit<Scenario, 'summarize'> & { summarize(result: Stored<Result>): Summary },
): Scenario {
  return { ...definition, summarize: (result) => definition.summarize(result as Stored<Result>) }
}

const num = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null
const ratioOf = (a: number | null, b: number | null): number | null =>
  a === null || b === null || b === 0 ? null : a / b

/** "median of 3 rounds, 0.41–0.47": a within-round ratio's spread, as a scenario stores it. */
function spreadText(
  spread:
    | { median?: number | null; min?: number | null; max?: number | null; rounds?: number | null }
    | undefined,
): string {
  const [min, max] = [num(spread?.min), num(spread?.max)]
  if (min === null || max === null) return 'spread not measured'
  return `median of ${spread?.rounds ?? '?'} rotated round(s), ${min.toFixed(2)}–${max.toFixed(2)}`
}

/** A figure's goal: its text in the table and whether the measured figure meets it. */
type Goal = (measured: { value: number | null; unit: string; ratio: number | null }) => {
  goal: string
  pass: boolean | null
}
/** No goal: the figure is reported. */
const reported: Goal = () => ({ goal: 'reported', pass: null })
/** "ratio ≥ 0.5". */
const ratioAtLeast =
  (min: number): Goal =>
  ({ ratio }) => ({ goal: `ratio ≥ ${min}`, pass: ratio === null ? null : ratio >= min })
/** "≤ 10 ms": the value, in the figure's unit. */
const atMost =
  (max: number): Goal =>
  ({ value, unit }) => ({ goal: `≤ ${max} ${unit}`, pass: value === null ? null : value <= max })
/** "ratio ≤ 2". */
const ratioAtMost =
  (max: number): Goal =>
  ({ ratio }) => ({ goal: `ratio ≤ ${max}`, pass: ratio === null ? null : ratio <= max })
/** "≥ 15× peer", "≤ 0.1× peer": the ratio to the peer library. */
const timesPeer =
  (bound: '≥' | '≤', times: number): Goal =>
  ({ ratio }) => ({
    goal: `${bound} ${times}× peer`,
    pass: ratio === null ? null : bound === '≥' ? ratio >= times : ratio <= times,
  })

interface FigureOptions {
  /** The baseline measured in the same run (in the figure's unit), and what it is. */
  baseline?: { name: string; value: number | null }
  /** Default: value ÷ baseline (null without a baseline). */
  ratio?: number | null
  /** Default: reported. */
  goal?: Goal
}

/** One row of the suite's table. */
function figure(name: string, value: number | null, unit: string, options: FigureOptions = {}): Figure {
  const baseline = options.baseline ? { ...options.baseline, unit } : null
  const ratio = options.ratio !== undefined ? options.ratio : ratioOf(value, baseline?.value ?? null)
  return { figure: name, value, unit, baseline, ratio, ...(options.goal ?? reported)({ value, unit, ratio }) }
}

/** Throughput with metrics on against the same run with `SLUICE_METRICS=false`: what metrics cost. */
function metricsCost(
  what: string,
  on: number | null,
  off: number | null,
  unit: string,
  r: { metricsRatio?: number | null; metricsCpuRatio?: number | null },
): Figure {
  // Alternating pairs give the measured ratio (their median) when the scenario ran several.
  const cpu = num(r.metricsCpuRatio)
  return figure(
    `${what} with metrics on ÷ off${cpu === null ? '' : ` (CPU off ÷ on ${cpu.toFixed(2)})`}`,
    on,
    unit,
    {
      baseline: { name: 'the same with SLUICE_METRICS=false', value: off },
      ratio: num(r.metricsRatio) ?? ratioOf(on, off),
      goal: ratioAtLeast(0.97),
    },
  )
}

/** A CPU figure in µs set against another from the same run (reported, not goal-bound). */
const cpuAgainst = (
  name: string,
  value: number | null | undefined,
  baselineName: string,
  baseline: number | null | undefined,
): Figure => figure(name, num(value), 'µs', { baseline: { name: baselineName, value: num(baseline) } })

type DeliverFloor = NonNullable<NonNullable<Stored<DeliverResult>['floors']>[string]>

/** A durable delivery loop's rate against raw undici in the same rounds (reported, not goal-bound). */
/**
 * Sluice's rate over the bare-tables loop's, round by round (both are ratios to raw undici in the same
 * round, so their quotient is Sluice ÷ the loop in that round): the median round and the spread.
 */
function againstBareLoop(r: Stored<DeliverResult>) {
  const sluice = r.roundRatios ?? []
  const bare = r.floors?.bareTablesLoop?.roundRatios ?? []
  const ratios = sluice.flatMap((value, round) => {
    const floor = num(bare[round])
    const own = num(value)
    return own === null || floor === null || floor === 0 ? [] : [own / floor]
  })
  if (ratios.length === 0) return undefined
  const sorted = ratios.toSorted((a, b) => a - b)
  return {
    median: Number(sorted[Math.floor((sorted.length - 1) / 2)]!.toFixed(3)),
    min: sorted[0],
    max: sorted.at(-1),
    rounds: sorted.length,
  }
}

const floorRate = (name: string, floor: DeliverFloor | undefined): Figure =>
  figure(name, num(floor?.perSecond), 'POSTs/s', {
    baseline: { name: 'raw undici POSTs, same round', value: num(floor?.rawPerSecond) },
    ratio: num(floor?.ratio),
  })

const ingest = scenario<IngestResult>({
  id: 'ingest',
  title: 'Ingest',
  script: 'ingest.ts',
  result: 'ingest',
  timeoutMs: (quick) => (quick ? 90_000 : 360_000),
  summarize(r) {
    const full = num(r.sluice?.synchronousFull?.eventsPerSecond)
    const normal = num(r.sluice?.synchronousNormal?.eventsPerSecond)
    const base = { name: 'no-op Node HTTP server, same load', value: num(r.baseline?.eventsPerSecond) }
    const problems: string[] = []
    const errors =
      (r.sluice?.synchronousFull?.errors ?? 0) +
      (r.sluice?.synchronousNormal?.errors ?? 0) +
      (r.sluice?.metricsOff?.errors ?? 0) +
      (r.sluice?.noProfiles?.errors ?? 0) +
      (r.floor?.errors ?? 0) +
      (r.profileFloor?.errors ?? 0)
    if (errors > 0) problems.push(`${errors} /v1/batch requests were not answered 200`)
    // A rate bought by letting profiles fall behind the calls is not a rate.
    const lagCalls = r.profileLag?.calls
    const lagLimit = r.profileLag?.callsPerSecond
    if (r.profileLag && (lagCalls == null || lagLimit == null || lagCalls > lagLimit)) {
      problems.push(
        `profiles fell behind: ${lagCalls ?? 'unknown'} calls not yet in profiles when a load stopped (more than a second of calls)`,
      )
    }
    const cpu = r.cpuPerRequestUs?.sluice
    const perRequest = r.load?.eventsPerRequest ?? 20
    return {
      figures: [
        figure(
          `Durable events/s through /v1/batch, ${perRequest} events/request (SQLite synchronous=FULL), against the bare durable ingest (no Sluice code, fsynced group commits; ${spreadText(r.ratios?.sluiceToFloor)})`,
          full,
          'events/s',
          {
            baseline: {
              name: 'bare durable ingest floor, same rounds',
              value: num(r.floor?.eventsPerSecond),
            },
            ratio: num(r.floorRatio),
            goal: ratioAtLeast(0.5),
          },
        ),
        figure(
          `The same against the no-op server (${spreadText(r.ratios?.sluiceToNoop)})`,
          full,
          'events/s',
          { baseline: base, ratio: num(r.ratio) },
        ),
        figure(
          `What bounds it: the same without profile upkeep (SLUICE_ROLE=api; the floor keeps no profiles), against the bare floor (${spreadText(r.ratios?.noProfilesToFloor)})`,
          num(r.sluice?.noProfiles?.eventsPerSecond),
          'events/s',
          {
            baseline: {
              name: 'bare durable ingest floor, same rounds',
              value: num(r.floor?.eventsPerSecond),
            },
            ratio: num(r.ratios?.noProfilesToFloor?.median),
          },
        ),
        figure(
          `The same against the bare floor keeping a profile per user from every call (an event row indexed by profile and a profile row, in the same commit; no identity resolution, traits or computed traits) (${spreadText(r.ratios?.sluiceToProfileFloor)})`,
          full,
          'events/s',
          {
            baseline: {
              name: 'bare floor keeping profiles, same rounds',
              value: num(r.profileFloor?.eventsPerSecond),
            },
            ratio: num(r.ratios?.sluiceToProfileFloor?.median),
          },
        ),
        figure(
          `The bare durable ingest floor itself (${spreadText(r.ratios?.floorToNoop)})`,
          num(r.floor?.eventsPerSecond),
          'events/s',
          { baseline: base, ratio: num(r.ratios?.floorToNoop?.median) },
        ),
        metricsCost('Ingest events/s', full, num(r.sluice?.metricsOff?.eventsPerSecond), 'events/s', r),
        figure('The same with SQLite synchronous=NORMAL (not durable on power loss)', normal, 'events/s', {
          baseline: base,
        }),
        cpuAgainst(
          `CPU per request, all Sluice threads (main ${cpu?.serverMainThread ?? '—'} µs, store ${cpu?.serverStoreThread ?? '—'} µs, V8 helpers ${cpu?.serverV8Helpers ?? '—'} µs)`,
          cpu?.server,
          'the no-op server, same requests',
          r.cpuPerRequestUs?.baseline?.server,
        ),
        cpuAgainst(
          `CPU per request of the bare durable floor (main ${r.cpuPerRequestUs?.floor?.serverMainThread ?? '—'} µs, store ${r.cpuPerRequestUs?.floor?.serverStoreThread ?? '—'} µs) against Sluice's: the steadier view of the goal's ratio on a busy machine`,
          r.cpuPerRequestUs?.floor?.server,
          "Sluice's, same round",
          cpu?.server,
        ),
        cpuAgainst(
          `Floor: storing a request's ${perRequest} calls alone (SqliteStore.ingest, fsynced; no HTTP, parsing or profiles), CPU`,
          r.budget?.storeFloorUsPerRequest,
          'the most Sluice may spend a request for ratio 0.5 (2 × no-op server + its load generator)',
          r.budget?.sluiceUsPerRequest,
        ),
      ],
      problems,
    }
  },
})

const footprint = scenario<FootprintResult>({
  id: 'footprint',
  title: 'Start-up and footprint',
  script: 'footprint.ts',
  result: 'footprint',
  timeoutMs: (quick) => (quick ? 60_000 : 120_000),
  summarize(r) {
    const range = (s: Stored<FootprintResult['startupMs']> | undefined) =>
      `median of ${s?.rounds ?? '?'} rounds, ${s?.min ?? '?'}–${s?.max ?? '?'}`
    return {
      figures: [
        figure(
          `Start-up of the embedded default: \`sluice start\` on a fresh data dir to /readyz 200 (${range(r.startupMs)})`,
          num(r.startupMs?.median),
          'ms',
          { goal: atMost(1_500) },
        ),
        figure(
          `Resident memory of the idle process, ${num(r.idleMs) === null ? '?' : (r.idleMs ?? 0) / 1000} s after start-up (${range(r.idleRssMb)})`,
          num(r.idleRssMb?.median),
          'MB',
          { goal: atMost(120) },
        ),
      ],
      problems: [],
    }
  },
})

const deliver = scenario<DeliverResult>({
  id: 'deliver',
  title: 'Delivery and latency',
  script: 'deliver.ts',
  result: 'deliver',
  timeoutMs: (quick) => (quick ? 90_000 : 600_000),
  summarize(r) {
    const sluice = num(r.sluice?.perSecond)
    const p50 = num(r.latency?.p50Ms)
    const p99 = num(r.latency?.p99Ms)
    const problems: string[] = []
    // deliver.ts waits 10 s for every acked event to arrive; one that never did makes p50/p99 infinite.
    if (p50 === null || p99 === null)
      problems.push('acked events never reached the receiver (p50/p99 infinite)')
    const rate = `${r.latency?.eventsPerSecond ?? 1000} events/s`
    const toBareLoop = againstBareLoop(r)
    return {
      figures: [
        figure(
          `Webhook POSTs/s from a ${(r.backlog ?? 0).toLocaleString('en')} backlog to a no-op receiver`,
          sluice,
          'POSTs/s',
          {
            baseline: { name: 'raw undici POSTs, same body, same receiver', value: num(r.raw?.perSecond) },
            goal: ratioAtLeast(0.6),
          },
        ),
        floorRate(
          "Floor: the engine's durable loop without its own work (no signing, retry rules, metrics), on Sluice's store",
          r.floors?.sluiceStoreLoop,
        ),
        floorRate(
          'Floor: the same durable loop on two bare tables with a due index, leases in memory (no Sluice code at all)',
          r.floors?.bareTablesLoop,
        ),
        figure(
          `Webhook POSTs/s against that bare durable loop (${spreadText(toBareLoop)})`,
          sluice,
          'POSTs/s',
          {
            baseline: {
              name: 'the bare-tables loop, same rounds',
              value: num(r.floors?.bareTablesLoop?.perSecond),
            },
            ratio: toBareLoop?.median ?? null,
            goal: ratioAtLeast(0.9),
          },
        ),
        metricsCost(
          'Delivery POSTs/s',
          num(r.metricsOn?.perSecond) ?? sluice,
          num(r.metricsOff?.perSecond),
          'POSTs/s',
          r,
        ),
        cpuAgainst(
          'Floor: a bare POST plus recording it in the store alone (claim, outcome, attempt row, fsynced commit), CPU per delivery',
          r.budget?.floorUs,
          'the most Sluice may spend a delivery for ratio 0.6, cores as busy as raw undici keeps them',
          r.budget?.atRawCoresUs,
        ),
        figure(`Latency p50, Tracking API ack → receipt, at ${rate}`, p50, 'ms', { goal: atMost(10) }),
        figure(`Latency p99, Tracking API ack → receipt, at ${rate}`, p99, 'ms', { goal: atMost(10) }),
      ],
      problems,
    }
  },
})

const isolation = scenario<IsolationResult>({
  id: 'isolation',
  title: 'Isolation',
  script: 'isolation.ts',
  result: 'isolation',
  timeoutMs: (quick) => (quick ? 60_000 : 180_000),
  summarize(r) {
    return {
      figures: [
        figure(
          `Deliveries/s to 9 healthy endpoints while a 10th never answers (request timeout ${r.settings?.requestTimeoutMs} ms, lease ${r.settings?.leaseMs} ms)`,
          num(r.withHanging?.perSecond),
          'deliveries/s',
          {
            baseline: { name: 'all 10 healthy, rate over the same 9', value: num(r.baseline?.perSecond) },
            goal: ratioAtLeast(0.9),
          },
        ),
        figure(
          'Deliveries/s to 9 healthy endpoints while a 10th answers 429 to every other request (its concurrency lowered, AIMD)',
          num(r.withThrottling?.perSecond),
          'deliveries/s',
          {
            baseline: { name: 'all 10 healthy, rate over the same 9', value: num(r.baseline?.perSecond) },
            goal: ratioAtLeast(0.9),
          },
        ),
      ],
      problems: r.problems ?? [],
    }
  },
})

const backlog = scenario<BacklogResult>({
  id: 'backlog',
  title: 'Backlog',
  script: 'backlog.ts',
  result: 'backlog',
  timeoutMs: (quick) => (quick ? 90_000 : 360_000),
  summarize(r) {
    const big = (r.large?.backlog ?? 0).toLocaleString('en')
    const pending = `${(r.baseline?.backlog ?? 0).toLocaleString('en')} pending`
    return {
      figures: [
        figure(
          `Peak RSS of the Sluice process with ${big} pending deliveries, draining`,
          num(r.peakRssMb),
          'MB',
          {
            baseline: { name: `the same process with ${pending}`, value: num(r.baseline?.lifetimePeakRssMb) },
            ratio: null,
            goal: atMost(160),
          },
        ),
        figure(
          `Drain rate with ${big} pending deliveries, receipts ${(r.settings?.skip ?? 0).toLocaleString('en')}–${(r.settings?.upto ?? 0).toLocaleString('en')}`,
          num(r.large?.drainPerSecond),
          'POSTs/s',
          {
            baseline: { name: `the same receipts with ${pending}`, value: num(r.baseline?.drainPerSecond) },
            goal: ratioAtLeast(0.9),
          },
        ),
        figure(
          `Drain rate with ${big} pending deliveries, sustained over ${(r.settings?.spanMs ?? 0) / 1000} s`,
          num(r.large?.sustained?.perSecond),
          'POSTs/s',
        ),
      ],
      problems: r.problems ?? [],
    }
  },
})

const client = scenario<ClientResult>({
  id: 'client',
  title: 'Client library',
  script: 'client.ts',
  result: 'client',
  timeoutMs: (quick) => (quick ? 90_000 : 420_000),
  summarize(r) {
    type Side = NonNullable<NonNullable<typeof r.median>['sluice']>
    const ours: Side = r.median?.sluice ?? {}
    const peer: Side = r.median?.segment ?? {}
    const baseline = (key: 'enqueuePerSecond' | 'heapGrowthMb' | 'deliveredPerSecond' | 'duplicates') => ({
      name: peer.library ?? '@segment/analytics-node',
      value: num(peer[key]),
    })
    const calls = (r.calls ?? 0).toLocaleString('en')
    const problems: string[] = []
    if ((ours.duplicates ?? 0) > 0) problems.push(`@sluice/analytics delivered ${ours.duplicates} duplicates`)
    if ((ours.lost ?? 0) > 0) problems.push(`@sluice/analytics lost ${ours.lost} events`)
    const duplicates = num(ours.duplicates)
    return {
      figures: [
        figure(`${calls} track calls: enqueue calls/s`, num(ours.enqueuePerSecond), 'calls/s', {
          baseline: baseline('enqueuePerSecond'),
          goal: timesPeer('≥', 15),
        }),
        figure(`${calls} track calls: heap growth`, num(ours.heapGrowthMb), 'MB', {
          baseline: baseline('heapGrowthMb'),
          goal: timesPeer('≤', 0.1),
        }),
        figure(`${calls} track calls: delivered events/s`, num(ours.deliveredPerSecond), 'events/s', {
          baseline: baseline('deliveredPerSecond'),
          goal: timesPeer('≥', 5),
        }),
        figure(`${calls} track calls: duplicates received (worst round)`, duplicates, '', {
          baseline: baseline('duplicates'),
          ratio: null,
          goal: () => ({
            goal: '0',
            pass: duplicates === null ? null : duplicates === 0 && (ours.lost ?? 0) === 0,
          }),
        }),
      ],
      problems,
    }
  },
})

/** PostgreSQL is reachable at the URL bench/lib/pg-setup.ts uses (a TCP connect, 2 s). */
async function postgresReachable(): Promise<string | null> {
  const { connect } = await import('node:net')
  const url = new URL(
    process.env.SLUICE_BENCH_DATABASE_URL ??
      process.env.SLUICE_TEST_DATABASE_URL ??
      'postgres://postgres@127.0.0.1:5432/test',
  )
  const host = url.hostname || '127.0.0.1'
  const port = Number(url.port || 5432)
  return new Promise((resolve) => {
    const socket = connect({ host, port })
    const done = (reason: string | null) => {
      socket.destroy()
      resolve(reason)
    }
    socket.setTimeout(2_000, () => done(`PostgreSQL at ${host}:${port} did not answer`))
    socket.once('connect', () => done(null))
    socket.once('error', (error) => done(`PostgreSQL at ${host}:${port} is not reachable (${error.message})`))
  })
}

type PostgresFigure = NonNullable<NonNullable<Stored<PostgresResult>['ingest']>['rawLoopback']>

const postgres = scenario<PostgresResult>({
  id: 'postgres',
  title: 'PostgreSQL',
  script: 'postgres.ts',
  result: 'postgres',
  timeoutMs: (quick) => (quick ? 120_000 : 300_000),
  precheck: postgresReachable,
  summarize(r) {
    const i = r.ingest ?? {}
    const d = r.delivery ?? {}
    const value = (measured: PostgresFigure | undefined) => num(measured?.perSecond)
    const withRaw = (name: string, raw: PostgresFigure | undefined) =>
      `${name} (raw loopback ${value(raw) ?? '—'})`
    const reported = (
      name: string,
      unit: string,
      measured: PostgresFigure | undefined,
      baselineName: string,
      baselineFigure: PostgresFigure | undefined,
    ): Figure =>
      figure(name, value(measured), unit, { baseline: { name: baselineName, value: value(baselineFigure) } })
    const problems: string[] = []
    for (const [name, measured] of Object.entries(i)) {
      const errors = typeof measured === 'object' && measured !== null ? (measured.errors ?? 0) : 0
      if (errors > 0) problems.push(`ingest ${name}: ${errors} requests not answered 200`)
    }
    return {
      figures: [
        reported(
          'Ingest on PostgreSQL, 1 API process',
          'events/s',
          i.postgresOneApiProcess,
          withRaw('SQLite, one process', i.rawLoopback),
          i.sqliteOneProcess,
        ),
        reported(
          'Ingest on PostgreSQL, 2 API processes',
          'events/s',
          i.postgresTwoApiProcesses,
          'PostgreSQL, 1 API process',
          i.postgresOneApiProcess,
        ),
        reported(
          'Delivery on PostgreSQL, 1 worker process',
          'POSTs/s',
          d.postgresOneWorker,
          withRaw('SQLite, one process', d.rawLoopback),
          d.sqliteOneProcess,
        ),
        reported(
          'Delivery on PostgreSQL, 2 worker processes',
          'POSTs/s',
          d.postgresTwoWorkers,
          'PostgreSQL, 1 worker process',
          d.postgresOneWorker,
        ),
      ],
      problems,
    }
  },
})

const privacy = scenario<PrivacyResult>({
  id: 'privacy',
  title: 'Privacy',
  script: 'privacy.ts',
  result: 'privacy',
  timeoutMs: (quick) => (quick ? 120_000 : 300_000),
  summarize(r) {
    const s = r.suppression ?? {}
    const e = r.erasure ?? {}
    const problems: string[] = []
    const errors =
      (s.withSuppressions?.errors ?? 0) +
      (s.withoutSuppressions?.errors ?? 0) +
      (e.before?.errors ?? 0) +
      (e.during?.errors ?? 0)
    if (errors > 0) problems.push(`${errors} /v1/batch requests were not answered 200`)
    return {
      figures: [
        figure(
          `Durable events/s with ${(s.suppressedIds ?? 100_000).toLocaleString('en')} suppressed user ids (every call checked)`,
          num(s.withSuppressions?.eventsPerSecond),
          'events/s',
          {
            baseline: {
              name: 'no suppressions, same run',
              value: num(s.withoutSuppressions?.eventsPerSecond),
            },
            ratio: num(s.ratio),
            goal: ratioAtLeast(0.95),
          },
        ),
        figure(
          `Ingest events/s while ${(e.erasedCalls ?? 0).toLocaleString('en')} stored calls of one user are erased (${e.erasureSeconds ?? '—'} s)`,
          num(e.during?.eventsPerSecond),
          'events/s',
          {
            baseline: { name: 'just before the deletion request', value: num(e.before?.eventsPerSecond) },
            ratio: num(e.ratio),
            goal: ratioAtLeast(0.8),
          },
        ),
      ],
      problems,
    }
  },
})

const profiles = scenario<ProfilesResult>({
  id: 'profiles',
  title: 'Profiles, computed traits and audiences',
  script: 'profiles.ts',
  result: 'profiles',
  timeoutMs: (quick) => (quick ? 180_000 : 900_000),
  summarize(r) {
    const problems: string[] = []
    if ((r.latency?.missing ?? 0) > 0)
      problems.push(`${r.latency?.missing} users entered the audience but no identify arrived`)
    if (r.creation && r.creation.deliveries !== r.creation.members) {
      problems.push(`${r.creation.members} members but ${r.creation.deliveries} identify calls enqueued`)
    }
    const scale = `${(r.creation?.profiles ?? 0).toLocaleString('en')} profiles / ${(r.creation?.calls ?? 0).toLocaleString('en')} calls`
    return {
      figures: [
        figure(
          `Audience creation over ${scale}: every member's identify enqueued`,
          num(r.creation?.seconds),
          's',
          { goal: atMost(10) },
        ),
        figure('Peak RSS of the process creating it', num(r.creation?.peakRssMb), 'MB', {
          goal: atMost(512),
        }),
        figure(
          'Call accepted → membership identify received, p50 at 1,000 calls/s (20 audiences + 20 computed traits)',
          num(r.latency?.p50Ms),
          'ms',
          { goal: atMost(50) },
        ),
        figure('The same, p99', num(r.latency?.p99Ms), 'ms', { goal: atMost(500) }),
        figure(
          'Ingest events/s with 20 audiences + 20 computed traits defined',
          num(r.ingest?.with20And20EventsPerSecond),
          'events/s',
          {
            baseline: { name: 'the same with none defined', value: num(r.ingest?.withNoneEventsPerSecond) },
            ratio: num(r.ingest?.ratio),
            goal: ratioAtLeast(0.7),
          },
        ),
      ],
      problems,
    }
  },
})

const subscriptions = scenario<SubscriptionsResult>({
  id: 'subscriptions',
  title: 'Subscriptions, filters and mappings',
  script: 'subscriptions.ts',
  result: 'subscriptions',
  timeoutMs: (quick) => (quick ? 120_000 : 600_000),
  summarize(r) {
    const problems: string[] = []
    if ((r.ingest?.gatedDeliveries ?? 0) > 0) {
      problems.push(`${r.ingest?.gatedDeliveries} deliveries created for subscriptions that match nothing`)
    }
    if (r.dryRun && r.dryRun.scanned !== r.dryRun.calls) {
      problems.push(`the dry run scanned ${r.dryRun.scanned} calls, not ${r.dryRun.calls}`)
    }
    const classic = r.delivery?.classic ?? []
    const mapped = r.delivery?.mapped ?? []
    const middle = (rates: typeof classic) => num(rates[Math.floor(rates.length / 2)]?.perSecond)
    return {
      figures: [
        figure('Deliveries/s with a subscription and a 10-field mapping', middle(mapped), 'deliveries/s', {
          baseline: { name: 'neither set, same run (ABBA pairs)', value: middle(classic) },
          ratio: num(r.delivery?.ratio),
          goal: ratioAtLeast(0.9),
        }),
        figure(
          `Ingest events/s with ${r.ingest?.destinations ?? 20} destinations whose subscriptions match nothing`,
          num(r.ingest?.gatedEventsPerSecond),
          'events/s',
          {
            baseline: {
              name: 'no destination connected, same run',
              value: num(r.ingest?.noneEventsPerSecond),
            },
            ratio: num(r.ingest?.ratio),
            goal: ratioAtLeast(0.97),
          },
        ),
        figure(
          `Dry run over ${(r.dryRun?.calls ?? 10_000).toLocaleString('en')} stored calls (subscription, 2 filters, 10-field mapping)`,
          num(r.dryRun?.medianMs),
          'ms',
          { goal: atMost(2_000) },
        ),
      ],
      problems,
    }
  },
})

const batching = scenario<BatchingResult>({
  id: 'batching',
  title: 'Batching',
  script: 'batching.ts',
  result: 'batching',
  timeoutMs: (quick) => (quick ? 60_000 : 400_000),
  summarize(r) {
    return {
      figures: [
        figure(
          `Messages delivered/s from a ${(r.backlog ?? 0).toLocaleString('en')} backlog, batches of ${r.batchSize ?? 100} per request (median of ${r.roundRatios?.length ?? 0} alternating rounds)`,
          num(r.batched?.perSecond),
          'messages/s',
          {
            baseline: { name: 'one message per request, same run', value: num(r.classic?.perSecond) },
            ratio: num(r.ratio),
            goal: ratioAtLeast(5),
          },
        ),
      ],
      problems: [],
    }
  },
})

const replay = scenario<ReplayResult>({
  id: 'replay',
  title: 'Replay beside live traffic',
  script: 'replay.ts',
  result: 'replay',
  timeoutMs: (quick) => (quick ? 120_000 : 600_000),
  summarize(r) {
    const rounds = r.rounds?.length ?? 0
    return {
      figures: [
        figure(
          `Live ack → receipt p99 at 1,000 events/s while a replay runs to the same destination (median of ${rounds} rounds)`,
          num(r.liveWithReplayP99Ms),
          'ms',
          {
            baseline: { name: 'no replay, same run', value: num(r.liveAloneP99Ms) },
            ratio: num(r.p99Ratio),
            goal: ratioAtMost(2),
          },
        ),
        figure(
          `Replayed messages/s beside that live traffic (${(r.history ?? 0).toLocaleString('en')} stored calls)`,
          num(r.replayUnderLivePerSecond),
          'messages/s',
          {
            baseline: {
              name: 'the same replay with no live traffic, same run',
              value: num(r.replayIdlePerSecond),
            },
            ratio: num(r.throughputRatio),
            goal: ratioAtLeast(0.5),
          },
        ),
      ],
      problems: [],
    }
  },
})

export const SCENARIOS: Scenario[] = [
  ingest,
  footprint,
  deliver,
  batching,
  isolation,
  backlog,
  client,
  postgres,
  privacy,
  profiles,
  subscriptions,
  replay,
]
