// The scenarios of `npm run bench` (bench/run.ts): which script runs each, where its JSON result is,
// and how that result becomes the suite's figures (value, baseline, ratio, goal, pass/short) and its
// data problems (a scenario that lost or duplicated data fails the suite; a figure short of its goal
// does not).

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
  summarize(result: any): { figures: Figure[]; problems: string[] }
}

const num = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null
const ratioOf = (a: number | null, b: number | null): number | null =>
  a === null || b === null || b === 0 ? null : a / b
const atLeast = (value: number | null, goal: number) => (value === null ? null : value >= goal)
const atMost = (value: number | null, goal: number) => (value === null ? null : value <= goal)

/** Throughput with metrics on against the same run with `SLUICE_METRICS=false`: what metrics cost. */
function metricsCost(what: string, on: number | null, off: number | null, unit: string, r: any): Figure {
  // Alternating pairs give the measured ratio (their median) when the scenario ran several.
  const ratio = num(r.metricsRatio) ?? ratioOf(on, off)
  const cpu = num(r.metricsCpuRatio)
  return {
    figure: `${what} with metrics on ÷ off${cpu === null ? '' : ` (CPU off ÷ on ${cpu.toFixed(2)})`}`,
    value: on,
    unit,
    baseline: { name: 'the same with SLUICE_METRICS=false', value: off, unit },
    ratio,
    goal: 'ratio ≥ 0.97',
    pass: atLeast(ratio, 0.97),
  }
}

/** A CPU figure in µs set against another from the same run (reported, not goal-bound). */
function cpuAgainst(figure: string, value: unknown, baselineName: string, baseline: unknown): Figure {
  const [us, baseUs] = [num(value), num(baseline)]
  return {
    figure,
    value: us,
    unit: 'µs',
    baseline: { name: baselineName, value: baseUs, unit: 'µs' },
    ratio: ratioOf(us, baseUs),
    goal: 'reported',
    pass: null,
  }
}

/** A durable delivery loop's rate against raw undici in the same rounds (reported, not goal-bound). */
function floorRate(figure: string, floor: any): Figure {
  return {
    figure,
    value: num(floor?.perSecond),
    unit: 'POSTs/s',
    baseline: { name: 'raw undici POSTs, same round', value: num(floor?.rawPerSecond), unit: 'POSTs/s' },
    ratio: num(floor?.ratio),
    goal: 'reported',
    pass: null,
  }
}

const ingest: Scenario = {
  id: 'ingest',
  title: 'Ingest',
  script: 'ingest.ts',
  result: 'ingest',
  timeoutMs: (quick) => (quick ? 60_000 : 180_000),
  summarize(r) {
    const full = num(r.sluice?.synchronousFull?.eventsPerSecond)
    const normal = num(r.sluice?.synchronousNormal?.eventsPerSecond)
    const baseline = num(r.baseline?.eventsPerSecond)
    const ratio = ratioOf(full, baseline)
    const base = { name: 'no-op Node HTTP server, same load', value: baseline, unit: 'events/s' }
    const problems: string[] = []
    const errors =
      (r.sluice?.synchronousFull?.errors ?? 0) +
      (r.sluice?.synchronousNormal?.errors ?? 0) +
      (r.sluice?.metricsOff?.errors ?? 0)
    if (errors > 0) problems.push(`${errors} /v1/batch requests were not answered 200`)
    return {
      figures: [
        {
          figure: `Durable events/s through /v1/batch, ${r.load?.eventsPerRequest ?? 20} events/request (SQLite synchronous=FULL)`,
          value: full,
          unit: 'events/s',
          baseline: base,
          ratio,
          goal: 'ratio ≥ 0.5',
          pass: atLeast(ratio, 0.5),
        },
        metricsCost('Ingest events/s', full, num(r.sluice?.metricsOff?.eventsPerSecond), 'events/s', r),
        {
          figure: 'The same with SQLite synchronous=NORMAL (not durable on power loss)',
          value: normal,
          unit: 'events/s',
          baseline: base,
          ratio: ratioOf(normal, baseline),
          goal: 'reported',
          pass: null,
        },
        cpuAgainst(
          `CPU per request, all Sluice threads (main ${r.cpuPerRequestUs?.sluice?.serverMainThread ?? '—'} µs, store ${r.cpuPerRequestUs?.sluice?.serverStoreThread ?? '—'} µs, V8 helpers ${r.cpuPerRequestUs?.sluice?.serverV8Helpers ?? '—'} µs)`,
          r.cpuPerRequestUs?.sluice?.server,
          'the no-op server, same requests',
          r.cpuPerRequestUs?.baseline?.server,
        ),
        cpuAgainst(
          `Floor: storing a request's ${r.load?.eventsPerRequest ?? 20} calls alone (SqliteStore.ingest, fsynced; no HTTP, parsing or profiles), CPU`,
          r.budget?.storeFloorUsPerRequest,
          'the most Sluice may spend a request for ratio 0.5 (2 × no-op server + its load generator)',
          r.budget?.sluiceUsPerRequest,
        ),
      ],
      problems,
    }
  },
}

const deliver: Scenario = {
  id: 'deliver',
  title: 'Delivery and latency',
  script: 'deliver.ts',
  result: 'deliver',
  timeoutMs: (quick) => (quick ? 90_000 : 600_000),
  summarize(r) {
    const sluice = num(r.sluice?.perSecond)
    const raw = num(r.raw?.perSecond)
    const ratio = ratioOf(sluice, raw)
    const p50 = num(r.latency?.p50Ms)
    const p99 = num(r.latency?.p99Ms)
    const problems: string[] = []
    // deliver.ts waits 10 s for every acked event to arrive; one that never did makes p50/p99 infinite.
    if (p50 === null || p99 === null)
      problems.push('acked events never reached the receiver (p50/p99 infinite)')
    const rate = `${r.latency?.eventsPerSecond ?? 1000} events/s`
    return {
      figures: [
        {
          figure: `Webhook POSTs/s from a ${(r.backlog ?? 0).toLocaleString('en')} backlog to a no-op receiver`,
          value: sluice,
          unit: 'POSTs/s',
          baseline: { name: 'raw undici POSTs, same body, same receiver', value: raw, unit: 'POSTs/s' },
          ratio,
          goal: 'ratio ≥ 0.6',
          pass: atLeast(ratio, 0.6),
        },
        floorRate(
          "Floor: the engine's durable loop without its own work (no signing, retry rules, metrics), on Sluice's store",
          r.floors?.sluiceStoreLoop,
        ),
        floorRate(
          'Floor: the same durable loop on two bare tables with a due index, leases in memory (no Sluice code at all)',
          r.floors?.bareTablesLoop,
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
        {
          figure: `Latency p50, Tracking API ack → receipt, at ${rate}`,
          value: p50,
          unit: 'ms',
          baseline: null,
          ratio: null,
          goal: '≤ 10 ms',
          pass: atMost(p50, 10),
        },
        {
          figure: `Latency p99, Tracking API ack → receipt, at ${rate}`,
          value: p99,
          unit: 'ms',
          baseline: null,
          ratio: null,
          goal: '≤ 10 ms',
          pass: atMost(p99, 10),
        },
      ],
      problems,
    }
  },
}

const isolation: Scenario = {
  id: 'isolation',
  title: 'Isolation',
  script: 'isolation.ts',
  result: 'isolation',
  timeoutMs: (quick) => (quick ? 60_000 : 180_000),
  summarize(r) {
    const value = num(r.withHanging?.perSecond)
    const baseline = num(r.baseline?.perSecond)
    const ratio = ratioOf(value, baseline)
    return {
      figures: [
        {
          figure: `Deliveries/s to 9 healthy endpoints while a 10th never answers (request timeout ${r.settings?.requestTimeoutMs} ms, lease ${r.settings?.leaseMs} ms)`,
          value,
          unit: 'deliveries/s',
          baseline: { name: 'all 10 healthy, rate over the same 9', value: baseline, unit: 'deliveries/s' },
          ratio,
          goal: 'ratio ≥ 0.9',
          pass: atLeast(ratio, 0.9),
        },
      ],
      problems: Array.isArray(r.problems) ? r.problems : [],
    }
  },
}

const backlog: Scenario = {
  id: 'backlog',
  title: 'Backlog',
  script: 'backlog.ts',
  result: 'backlog',
  timeoutMs: (quick) => (quick ? 90_000 : 360_000),
  summarize(r) {
    const rss = num(r.peakRssMb)
    const value = num(r.large?.drainPerSecond)
    const baseline = num(r.baseline?.drainPerSecond)
    const ratio = ratioOf(value, baseline)
    const big = (r.large?.backlog ?? 0).toLocaleString('en')
    return {
      figures: [
        {
          figure: `Peak RSS of the Sluice process with ${big} pending deliveries, draining`,
          value: rss,
          unit: 'MB',
          baseline: {
            name: `the same process with ${(r.baseline?.backlog ?? 0).toLocaleString('en')} pending`,
            value: num(r.baseline?.lifetimePeakRssMb),
            unit: 'MB',
          },
          ratio: null,
          goal: '≤ 160 MB',
          pass: atMost(rss, 160),
        },
        {
          figure: `Drain rate with ${big} pending deliveries, receipts ${(r.settings?.skip ?? 0).toLocaleString('en')}–${(r.settings?.upto ?? 0).toLocaleString('en')}`,
          value,
          unit: 'POSTs/s',
          baseline: {
            name: `the same receipts with ${(r.baseline?.backlog ?? 0).toLocaleString('en')} pending`,
            value: baseline,
            unit: 'POSTs/s',
          },
          ratio,
          goal: 'ratio ≥ 0.9',
          pass: atLeast(ratio, 0.9),
        },
        {
          figure: `Drain rate with ${big} pending deliveries, sustained over ${(r.settings?.spanMs ?? 0) / 1000} s`,
          value: num(r.large?.sustained?.perSecond),
          unit: 'POSTs/s',
          baseline: null,
          ratio: null,
          goal: 'reported',
          pass: null,
        },
      ],
      problems: Array.isArray(r.problems) ? r.problems : [],
    }
  },
}

const client: Scenario = {
  id: 'client',
  title: 'Client library',
  script: 'client.ts',
  result: 'client',
  timeoutMs: (quick) => (quick ? 90_000 : 420_000),
  summarize(r) {
    const ours = r.median?.sluice ?? {}
    const peer = r.median?.segment ?? {}
    const name = peer.library ?? '@segment/analytics-node'
    const row = (
      figure: string,
      key: string,
      unit: string,
      goal: string,
      meets: (ratio: number) => boolean,
    ): Figure => {
      const ratio = ratioOf(num(ours[key]), num(peer[key]))
      return {
        figure,
        value: num(ours[key]),
        unit,
        baseline: { name, value: num(peer[key]), unit },
        ratio,
        goal,
        pass: ratio === null ? null : meets(ratio),
      }
    }
    const calls = (r.calls ?? 0).toLocaleString('en')
    const problems: string[] = []
    if ((ours.duplicates ?? 0) > 0) problems.push(`@sluice/analytics delivered ${ours.duplicates} duplicates`)
    if ((ours.lost ?? 0) > 0) problems.push(`@sluice/analytics lost ${ours.lost} events`)
    return {
      figures: [
        row(
          `${calls} track calls: enqueue calls/s`,
          'enqueuePerSecond',
          'calls/s',
          '≥ 15× peer',
          (x) => x >= 15,
        ),
        row(`${calls} track calls: heap growth`, 'heapGrowthMb', 'MB', '≤ 0.1× peer', (x) => x <= 0.1),
        row(
          `${calls} track calls: delivered events/s`,
          'deliveredPerSecond',
          'events/s',
          '≥ 5× peer',
          (x) => x >= 5,
        ),
        {
          figure: `${calls} track calls: duplicates received (worst round)`,
          value: num(ours.duplicates),
          unit: '',
          baseline: { name, value: num(peer.duplicates), unit: '' },
          ratio: null,
          goal: '0',
          pass: num(ours.duplicates) === null ? null : ours.duplicates === 0 && (ours.lost ?? 0) === 0,
        },
      ],
      problems,
    }
  },
}

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

const postgres: Scenario = {
  id: 'postgres',
  title: 'PostgreSQL',
  script: 'postgres.ts',
  result: 'postgres',
  timeoutMs: (quick) => (quick ? 120_000 : 300_000),
  precheck: postgresReachable,
  summarize(r) {
    const i = r.ingest ?? {}
    const d = r.delivery ?? {}
    const value = (figure: any) => num(figure?.perSecond)
    const withRaw = (name: string, raw: any) => `${name} (raw loopback ${value(raw) ?? '—'})`
    const reported = (
      figure: string,
      unit: string,
      measured: any,
      baselineName: string,
      baselineFigure: any,
    ): Figure => ({
      figure,
      value: value(measured),
      unit,
      baseline: { name: baselineName, value: value(baselineFigure), unit },
      ratio: ratioOf(value(measured), value(baselineFigure)),
      goal: 'reported',
      pass: null,
    })
    const problems: string[] = []
    for (const [name, figure] of Object.entries(i)) {
      const errors = (figure as { errors?: number } | null)?.errors ?? 0
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
}

const privacy: Scenario = {
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
    const suppressionRatio = num(s.ratio)
    const erasureRatio = num(e.ratio)
    return {
      figures: [
        {
          figure: `Durable events/s with ${(s.suppressedIds ?? 100_000).toLocaleString('en')} suppressed user ids (every call checked)`,
          value: num(s.withSuppressions?.eventsPerSecond),
          unit: 'events/s',
          baseline: {
            name: 'no suppressions, same run',
            value: num(s.withoutSuppressions?.eventsPerSecond),
            unit: 'events/s',
          },
          ratio: suppressionRatio,
          goal: 'ratio ≥ 0.95',
          pass: atLeast(suppressionRatio, 0.95),
        },
        {
          figure: `Ingest events/s while ${(e.erasedCalls ?? 0).toLocaleString('en')} stored calls of one user are erased (${e.erasureSeconds ?? '—'} s)`,
          value: num(e.during?.eventsPerSecond),
          unit: 'events/s',
          baseline: {
            name: 'just before the deletion request',
            value: num(e.before?.eventsPerSecond),
            unit: 'events/s',
          },
          ratio: erasureRatio,
          goal: 'ratio ≥ 0.8',
          pass: atLeast(erasureRatio, 0.8),
        },
      ],
      problems,
    }
  },
}

const profiles: Scenario = {
  id: 'profiles',
  title: 'Profiles, computed traits and audiences',
  script: 'profiles.ts',
  result: 'profiles',
  timeoutMs: (quick) => (quick ? 180_000 : 900_000),
  summarize(r) {
    const seconds = num(r.creation?.seconds)
    const rss = num(r.creation?.peakRssMb)
    const p50 = num(r.latency?.p50Ms)
    const p99 = num(r.latency?.p99Ms)
    const ratio = num(r.ingest?.ratio)
    const problems: string[] = []
    if ((r.latency?.missing ?? 0) > 0)
      problems.push(`${r.latency.missing} users entered the audience but no identify arrived`)
    if (r.creation && r.creation.deliveries !== r.creation.members) {
      problems.push(`${r.creation.members} members but ${r.creation.deliveries} identify calls enqueued`)
    }
    const scale = `${(r.creation?.profiles ?? 0).toLocaleString('en')} profiles / ${(r.creation?.calls ?? 0).toLocaleString('en')} calls`
    const reported = { baseline: null, ratio: null }
    return {
      figures: [
        {
          figure: `Audience creation over ${scale}: every member's identify enqueued`,
          value: seconds,
          unit: 's',
          ...reported,
          goal: '≤ 10 s',
          pass: atMost(seconds, 10),
        },
        {
          figure: 'Peak RSS of the process creating it',
          value: rss,
          unit: 'MB',
          ...reported,
          goal: '≤ 512 MB',
          pass: atMost(rss, 512),
        },
        {
          figure:
            'Call accepted → membership identify received, p50 at 1,000 calls/s (20 audiences + 20 computed traits)',
          value: p50,
          unit: 'ms',
          ...reported,
          goal: '≤ 50 ms',
          pass: atMost(p50, 50),
        },
        {
          figure: 'The same, p99',
          value: p99,
          unit: 'ms',
          ...reported,
          goal: '≤ 500 ms',
          pass: atMost(p99, 500),
        },
        {
          figure: 'Ingest events/s with 20 audiences + 20 computed traits defined',
          value: num(r.ingest?.with20And20EventsPerSecond),
          unit: 'events/s',
          baseline: {
            name: 'the same with none defined',
            value: num(r.ingest?.withNoneEventsPerSecond),
            unit: 'events/s',
          },
          ratio,
          goal: 'ratio ≥ 0.7',
          pass: atLeast(ratio, 0.7),
        },
      ],
      problems,
    }
  },
}

export const SCENARIOS: Scenario[] = [
  ingest,
  deliver,
  isolation,
  backlog,
  client,
  postgres,
  privacy,
  profiles,
]
