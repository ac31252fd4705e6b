// npm run bench:postgres [-- --quick]
// Sluice on PostgreSQL, beside SQLite and the raw loopback limit, all measured in this run:
// 1. Ingest: durable events/s through /v1/batch (20 events a request, 32 connections) into one API
//    process and into two API processes sharing one PostgreSQL; SQLite (one process) and a no-op Node
//    HTTP server under the same load.
// 2. Delivery: webhook POSTs/s draining a backlog with one and with two worker processes; SQLite (one
//    process, in-process engine) and raw undici POSTs of the same body to the same no-op receiver.
// Every party runs in its own process. Machine-wide CPU use is sampled during each figure, because on a
// small machine the cores, not Sluice or PostgreSQL, are what the processes share.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { type CpuReport, measureCpu } from './lib/pg-cpu.ts'
import { BENCH_SECRET_KEY, freshDatabase, seedBacklog, seedSource, serverInfo } from './lib/pg-setup.ts'
import { machine, runJson, SLUICE_CLI, startProcess, stop } from './lib/processes.ts'

const quick = process.argv.includes('--quick')
const durationMs = quick ? 2_000 : 8_000
const warmupMs = quick ? 300 : 1_000
const backlog = quick ? 5_000 : 40_000
const connections = 32
const perRequest = 20
const concurrency = 32
const loadGenerator = join(import.meta.dirname, 'lib/load-generator.ts')
const BANNER = /listening on (http:\/\/\S+)[\s\S]*curl -u '([^:]+):/

interface LoadResult {
  requests: number
  events: number
  errors: number
  statuses: Record<string, number>
  seconds: number
  eventsPerSecond: number
}

interface Figure {
  perSecond: number
  errors?: number
  cpu: CpuReport
}

const round = (value: number) => Math.round(value)

/** Warm-up, then the measured run, against one or more URLs at once (connections split evenly). */
async function load(targets: { url: string; writeKey: string }[], pids: number[] = []): Promise<Figure> {
  const each = String(connections / targets.length)
  await Promise.all(
    targets.map((t) =>
      runJson<LoadResult>([loadGenerator, t.url, t.writeKey, String(perRequest), each, String(warmupMs)]),
    ),
  )
  const cpu = measureCpu(pids)
  const results = await Promise.all(
    targets.map((t) =>
      runJson<LoadResult>([loadGenerator, t.url, t.writeKey, String(perRequest), each, String(durationMs)]),
    ),
  )
  const report = cpu()
  const events = results.reduce((sum, r) => sum + r.events, 0)
  const seconds = Math.max(...results.map((r) => r.seconds))
  return {
    perSecond: round(events / seconds),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
    cpu: report,
  }
}

async function ingestBaseline(): Promise<Figure> {
  const { child, match } = await startProcess([join(import.meta.dirname, 'lib/noop-server.ts')], /^(\d+)$/m)
  try {
    return await load([{ url: `http://127.0.0.1:${match[1]}/v1/batch`, writeKey: 'k' }])
  } finally {
    await stop(child)
  }
}

async function ingestSqlite(): Promise<Figure> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-pg-sqlite-'))
  const { child, match } = await startProcess([SLUICE_CLI, 'start', '--role', 'api'], BANNER, {
    SLUICE_DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'warn',
  })
  try {
    return await load([{ url: `${match[1]}/v1/batch`, writeKey: match[2]! }], [child.pid!])
  } finally {
    await stop(child)
    await rm(dataDir, { recursive: true, force: true })
  }
}

async function ingestPostgres(apiProcesses: number): Promise<Figure> {
  const database = await freshDatabase()
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-pg-'))
  const env = {
    DATABASE_URL: database.url,
    SLUICE_SECRET_KEY: BENCH_SECRET_KEY,
    SLUICE_DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'warn',
    SLUICE_ADMIN_TOKEN: 'bench-admin-token-0123456789',
  }
  const children = []
  try {
    // On a shared database `sluice start` makes no first source (processes could race to), so the
    // benchmark makes it; every API process then prints its write key in the banner.
    const writeKey = await seedSource(database.url)
    const targets: { url: string; writeKey: string }[] = []
    for (let i = 0; i < apiProcesses; i++) {
      const { child, match } = await startProcess([SLUICE_CLI, 'start', '--role', 'api'], BANNER, env)
      children.push(child)
      targets.push({ url: `${match[1]}/v1/batch`, writeKey })
    }
    return await load(
      targets,
      children.map((child) => child.pid!),
    )
  } finally {
    await Promise.all(children.map((child) => stop(child)))
    await database.drop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

async function withReceiver<T>(work: (url: string) => Promise<T>): Promise<T> {
  const { child, match } = await startProcess([join(import.meta.dirname, 'lib/noop-server.ts')], /^(\d+)$/m)
  try {
    return await work(`http://127.0.0.1:${match[1]}/hook`)
  } finally {
    await stop(child)
  }
}

async function deliveryRaw(url: string): Promise<Figure> {
  const rawPost = join(import.meta.dirname, 'lib/raw-post.ts')
  await runJson([rawPost, url, '2000', String(concurrency)]) // warm-up
  const cpu = measureCpu()
  const raw = await runJson<{ perSecond: number }>([rawPost, url, String(backlog), String(concurrency)])
  return { perSecond: round(raw.perSecond), cpu: cpu() }
}

async function deliverySqlite(url: string): Promise<Figure> {
  const cpu = measureCpu()
  const drained = await runJson<{ perSecond: number }>([
    join(import.meta.dirname, 'lib/drain-backlog.ts'),
    url,
    String(backlog),
    String(concurrency),
  ])
  return { perSecond: round(drained.perSecond), cpu: cpu() }
}

async function deliveryPostgres(url: string, workerProcesses: number): Promise<Figure> {
  const database = await freshDatabase()
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-pg-'))
  const children = []
  const { store, destinationId } = await seedBacklog(database.url, url, backlog)
  try {
    const env = {
      DATABASE_URL: database.url,
      SLUICE_SECRET_KEY: BENCH_SECRET_KEY,
      SLUICE_DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'warn',
      SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
      SLUICE_DELIVERY_CONCURRENCY: String(concurrency),
    }
    for (let i = 0; i < workerProcesses; i++) {
      children.push(
        (await startProcess([SLUICE_CLI, 'start', '--role', 'worker'], /worker is delivering/, env)).child,
      )
    }
    // The clock starts when the destination is enabled: the workers hear it over LISTEN/NOTIFY.
    const cpu = measureCpu(children.map((child) => child.pid!))
    const started = performance.now()
    await store.updateDestination(destinationId, { enabled: true })
    // Done when nothing is pending any more (a delivery stays pending until its success is recorded).
    // Counting what is left stays cheap as the backlog drains, so the polling barely loads PostgreSQL.
    let left = backlog
    while (left > 0) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      left = await store.countDeliveries({ destinationId, status: 'pending' })
    }
    const seconds = (performance.now() - started) / 1000
    const delivered = await store.countDeliveries({ destinationId, status: 'delivered' })
    if (delivered !== backlog) throw new Error(`only ${delivered} of ${backlog} delivered`)
    return { perSecond: round(backlog / seconds), cpu: cpu() }
  } finally {
    await Promise.all(children.map((child) => stop(child)))
    await store.close()
    await database.drop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

const postgres = await serverInfo()
// Other work on the machine skews every figure; the load average before and after says how much.
const loadBefore = loadavg()[0]!
const ingest = {
  baseline: await ingestBaseline(),
  sqlite: await ingestSqlite(),
  postgres1: await ingestPostgres(1),
  postgres2: await ingestPostgres(2),
}
const delivery = await withReceiver(async (url) => ({
  raw: await deliveryRaw(url),
  sqlite: await deliverySqlite(url),
  postgres1: await deliveryPostgres(url, 1),
  postgres2: await deliveryPostgres(url, 2),
}))

const ratio = (a: number, b: number) => Number((a / b).toFixed(2))
const result = {
  scenario: 'postgres',
  quick,
  machine: {
    ...machine(),
    loadAverage1m: { before: Number(loadBefore.toFixed(2)), after: Number(loadavg()[0]!.toFixed(2)) },
  },
  postgres,
  load: { connections, eventsPerRequest: perRequest, durationMs, backlog, concurrencyPerWorker: concurrency },
  ingest: {
    rawLoopback: ingest.baseline,
    sqliteOneProcess: ingest.sqlite,
    postgresOneApiProcess: ingest.postgres1,
    postgresTwoApiProcesses: ingest.postgres2,
    scaling: ratio(ingest.postgres2.perSecond, ingest.postgres1.perSecond),
  },
  delivery: {
    rawLoopback: delivery.raw,
    sqliteOneProcess: delivery.sqlite,
    postgresOneWorker: delivery.postgres1,
    postgresTwoWorkers: delivery.postgres2,
    scaling: ratio(delivery.postgres2.perSecond, delivery.postgres1.perSecond),
  },
}
/** What bench/results/postgres.json holds; the suite's figures are read from it (bench/lib/suite-scenarios.ts). */
export type PostgresResult = typeof result

const cpuText = (figure: Figure) =>
  figure.cpu.busy === null
    ? '—'
    : `${Math.round(figure.cpu.busy * 100)}%` +
      (figure.cpu.groups.postgres !== undefined
        ? ` (pg ${Math.round(figure.cpu.groups.postgres * 100)}, sluice ${Math.round((figure.cpu.groups.sluice ?? 0) * 100)}, other ${Math.round((figure.cpu.groups.other ?? 0) * 100)})`
        : '')
const row = (name: string, figure: Figure, base: number) =>
  `| ${name} | ${figure.perSecond} | ${ratio(figure.perSecond, base).toFixed(2)} | ${cpuText(figure)} |`
const table = [
  `PostgreSQL benchmark (${result.machine.cpus} CPU cores, ${result.machine.model}, Node ${result.machine.node}, PostgreSQL ${postgres.server_version}, synchronous_commit=${postgres.synchronous_commit}${quick ? ', quick' : ''})`,
  '',
  '| Ingest (/v1/batch, 20 events a request, 32 connections) | events/s | vs raw | CPU busy (all cores; share by pg / sluice / other) |',
  '|---|---:|---:|---|',
  row('Raw loopback: no-op Node HTTP server', ingest.baseline, ingest.baseline.perSecond),
  row('SQLite, one process (synchronous=FULL)', ingest.sqlite, ingest.baseline.perSecond),
  row('PostgreSQL, one API process', ingest.postgres1, ingest.baseline.perSecond),
  row('PostgreSQL, two API processes', ingest.postgres2, ingest.baseline.perSecond),
  '',
  `| Delivery (${backlog.toLocaleString('en')} backlog, ${concurrency} in flight per worker) | POSTs/s | vs raw | CPU busy |`,
  '|---|---:|---:|---|',
  row('Raw loopback: undici POSTs, same body, same receiver', delivery.raw, delivery.raw.perSecond),
  row('SQLite, one process', delivery.sqlite, delivery.raw.perSecond),
  row('PostgreSQL, one worker process', delivery.postgres1, delivery.raw.perSecond),
  row('PostgreSQL, two worker processes', delivery.postgres2, delivery.raw.perSecond),
  '',
  `Scaling, two processes vs one: ingest ×${result.ingest.scaling}, delivery ×${result.delivery.scaling} on ${result.machine.cpus} cores.`,
  `Load average (1 min) before/after the run: ${result.machine.loadAverage1m.before} / ${result.machine.loadAverage1m.after} (other work on the machine shows up as "other").`,
].join('\n')
console.log(table)
await mkdir(join(import.meta.dirname, 'results'), { recursive: true })
await writeFile(
  join(import.meta.dirname, 'results', quick ? 'postgres.quick.json' : 'postgres.json'),
  `${JSON.stringify(result, null, 2)}\n`,
)
