// npm run bench -- --only subscriptions [--quick]
// What subscriptions, filters and mappings cost, measured in one run on the same machine:
// - Delivery: webhook deliveries/s from a backlog with a subscription (every call matches) and a
//   10-field mapping ÷ the same with neither (bench/lib/drain-backlog.ts), in ABBA pairs.
// - Ingest: durable events/s through /v1/batch with 20 destinations connected whose subscriptions
//   match nothing ÷ the same with no destination connected. Rounds alternate between two servers.
// - Dry run: the time to run subscription, filters and mapping over 10,000 stored calls.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { DryRunAnswer, Source as SourceView } from '../packages/server/src/api/index.ts'
import { MAPPED_SETTINGS } from './lib/mapped-settings.ts'
import { machine, runJson, SLUICE_CLI, startProcess, stop } from './lib/processes.ts'

const quick = process.argv.includes('--quick')
const roundMs = quick ? 1_000 : 3_000
// An even number of rounds: each server goes first in half of them (the second of a round starts while
// the first may still be finishing its work, e.g. its profile worker catching up).
const rounds = quick ? 2 : 6
/** Quiet before each measured load, so that a round measures the loaded server's work, not the other's tail. */
const settleMs = quick ? 200 : 750
const drainCount = quick ? 5_000 : 30_000
const drainPairs = quick ? 1 : 3
const gatedDestinations = 20
const dryRunCalls = 10_000
const connections = 32
const perRequest = 20
const ADMIN = 'bench-subscriptions-token-0123456789'

interface LoadResult {
  events: number
  errors: number
  seconds: number
  eventsPerSecond: number
}

interface Rate {
  count: number
  seconds: number
  perSecond: number
}

interface Server {
  url: string
  writeKey: string
  close(): Promise<void>
}

export interface SubscriptionsResult {
  machine: ReturnType<typeof machine>
  quick: boolean
  delivery: { classic: Rate[]; mapped: Rate[]; ratios: number[]; ratio: number }
  ingest: {
    destinations: number
    none: LoadResult[]
    gated: LoadResult[]
    noneEventsPerSecond: number
    gatedEventsPerSecond: number
    ratios: number[]
    ratio: number
    /** Deliveries created on the gated server: must be none. */
    gatedDeliveries: number
  }
  dryRun: { calls: number; scanned: number; matched: number; runsMs: number[]; medianMs: number }
}

/** The middle value; of an even count, the mean of the two middle ones. */
const median = (values: number[]) => {
  const sorted = values.toSorted((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}
const round3 = (value: number) => Number(value.toFixed(3))

async function startSluice(): Promise<Server> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-subscriptions-'))
  const { child, match } = await startProcess(
    [SLUICE_CLI, 'start'],
    /listening on (http:\/\/\S+)[\s\S]*curl -u '([^:]+):/,
    {
      SLUICE_DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'warn',
      SLUICE_ADMIN_TOKEN: ADMIN,
      SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
    },
  )
  return {
    url: match[1]!,
    writeKey: match[2]!,
    async close() {
      await stop(child)
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}

/** A management API call; `View` is what the route answers (the server's API types). */
async function api<View>(server: Server, method: string, path: string, body?: unknown): Promise<View> {
  const response = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
  return (await response.json()) as View
}

const load = (server: Server, durationMs: number) =>
  runJson<LoadResult>([
    join(import.meta.dirname, 'lib/load-generator.ts'),
    `${server.url}/v1/batch`,
    server.writeKey,
    String(perRequest),
    String(connections),
    String(durationMs),
  ])

const rate = (results: LoadResult[]) =>
  results.reduce((sum, r) => sum + r.events, 0) / results.reduce((sum, r) => sum + r.seconds, 0)

async function measureDelivery(): Promise<SubscriptionsResult['delivery']> {
  const { child, match } = await startProcess([join(import.meta.dirname, 'lib/noop-server.ts')], /^(\d+)$/m)
  try {
    const url = `http://127.0.0.1:${match[1]}/hook`
    const drain = (settings: 'classic' | 'mapped') =>
      runJson<Rate>([
        join(import.meta.dirname, 'lib/drain-backlog.ts'),
        url,
        String(drainCount),
        '32',
        'on',
        settings,
      ])
    const classic: Rate[] = []
    const mapped: Rate[] = []
    const ratios: number[] = []
    // ABBA: the load of a shared machine, and what a drain leaves behind, fall on both alike.
    for (let pair = 0; pair < drainPairs; pair++) {
      const [first, second] =
        pair % 2 === 0 ? (['classic', 'mapped'] as const) : (['mapped', 'classic'] as const)
      const a = await drain(first)
      const b = await drain(second)
      const [plain, withSettings] = first === 'classic' ? [a, b] : [b, a]
      classic.push(plain)
      mapped.push(withSettings)
      ratios.push(round3(withSettings.perSecond / plain.perSecond))
    }
    return { classic, mapped, ratios, ratio: median(ratios) }
  } finally {
    await stop(child)
  }
}

async function measureIngestAndDryRun(): Promise<Pick<SubscriptionsResult, 'ingest' | 'dryRun'>> {
  const plain = await startSluice()
  const gated = await startSluice()
  try {
    const { sources } = await api<{ sources: SourceView[] }>(gated, 'GET', '/sources')
    for (let i = 0; i < gatedDestinations; i++) {
      await api(gated, 'POST', '/destinations', {
        name: `gated ${i}`,
        type: 'webhooks',
        sourceIds: [sources[0]!.id],
        // Never dialled: nothing matches.
        settings: { webhooks: [{ url: 'http://127.0.0.1:9/never' }], subscription: `event = "Never ${i}"` },
      })
    }
    await load(plain, 500)
    await load(gated, 500)
    const none: LoadResult[] = []
    const withGates: LoadResult[] = []
    const ratios: number[] = []
    for (let round = 0; round < rounds; round++) {
      const first = round % 2 === 0 ? plain : gated
      await sleep(settleMs)
      const a = await load(first, roundMs)
      await sleep(settleMs)
      const b = await load(first === plain ? gated : plain, roundMs)
      const [base, some] = first === plain ? [a, b] : [b, a]
      none.push(base)
      withGates.push(some)
      ratios.push(round3(some.eventsPerSecond / base.eventsPerSecond))
    }
    const { destinations } = await api<{ destinations: { stats: { pending: number; delivered: number } }[] }>(
      gated,
      'GET',
      '/destinations',
    )
    const gatedDeliveries = destinations.reduce((sum, d) => sum + d.stats.pending + d.stats.delivered, 0)

    // The dry run, over the gated server's most recent calls (the load rounds stored far more).
    const runsMs: number[] = []
    let answer: DryRunAnswer | undefined
    for (let run = 0; run < 3; run++) {
      const started = performance.now()
      answer = await api<DryRunAnswer>(gated, 'POST', '/destinations/dry-run', {
        sourceIds: [sources[0]!.id],
        settings: {
          ...MAPPED_SETTINGS,
          filters: [
            { action: 'dropFields', fields: ['context.ip'] },
            { action: 'sample', percent: 50 },
          ],
        },
        limit: dryRunCalls,
      })
      runsMs.push(Math.round(performance.now() - started))
    }
    return {
      ingest: {
        destinations: gatedDestinations,
        none,
        gated: withGates,
        noneEventsPerSecond: Math.round(rate(none)),
        gatedEventsPerSecond: Math.round(rate(withGates)),
        ratios,
        ratio: round3(median(ratios)),
        gatedDeliveries,
      },
      dryRun: {
        calls: dryRunCalls,
        scanned: answer?.scanned ?? 0,
        matched: answer?.matched ?? 0,
        runsMs,
        medianMs: median(runsMs),
      },
    }
  } finally {
    await plain.close()
    await gated.close()
  }
}

const delivery = await measureDelivery()
const { ingest, dryRun } = await measureIngestAndDryRun()
const result: SubscriptionsResult = { machine: machine(), quick, delivery, ingest, dryRun }
const out = join(import.meta.dirname, 'results')
await mkdir(out, { recursive: true })
const file = join(out, quick ? 'subscriptions.quick.json' : 'subscriptions.json')
await writeFile(file, `${JSON.stringify(result, null, 2)}\n`)
console.log(
  `delivery mapped ÷ classic ${delivery.ratio}; ingest with ${gatedDestinations} gated ÷ none ${ingest.ratio}; ` +
    `dry run of ${dryRun.scanned} calls ${dryRun.medianMs} ms`,
)
