// npm run bench -- --only privacy [--quick]
// What privacy costs ingest, measured in one run on the same machine:
// - Suppression: durable events/s through /v1/batch with 100,000 suppressed user ids (none of them the
//   sender, so every call is checked and passes) ÷ the same with none. Rounds alternate between two
//   servers so machine noise falls on both alike.
// - Erasure: events/s of another user's calls while 100,000 stored calls of one user are erased ÷ the
//   rate just before the deletion request.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type {
  Regulation as RegulationView,
  Suppression as SuppressionView,
} from '../packages/server/src/api/index.ts'
import { machine, runJson, SLUICE_CLI, startProcess, stop } from './lib/processes.ts'

const quick = process.argv.includes('--quick')
const roundMs = quick ? 1_000 : 3_000
const rounds = quick ? 2 : 5
const suppressedIds = 100_000
const erasedCalls = quick ? 20_000 : 100_000
const connections = 32
const perRequest = 20
const loadGenerator = join(import.meta.dirname, 'lib/load-generator.ts')
const ADMIN = 'bench-privacy-token-0123456789'

interface LoadResult {
  events: number
  errors: number
  seconds: number
  eventsPerSecond: number
}

interface Server {
  url: string
  writeKey: string
  close(): Promise<void>
}

async function startSluice(): Promise<Server> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-privacy-'))
  const { child, match } = await startProcess(
    [SLUICE_CLI, 'start'],
    /listening on (http:\/\/\S+)[\s\S]*curl -u '([^:]+):/,
    { SLUICE_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', SLUICE_ADMIN_TOKEN: ADMIN },
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

/** A management API call; `View` is what the route answers (the server's API types, packages/server/src/api/). */
async function api<View>(server: Server, method: string, path: string, body?: unknown): Promise<View> {
  const response = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
  return (await response.json()) as View
}

const load = (server: Server, durationMs: number, userId = 'bench-user') =>
  runJson<LoadResult>([
    loadGenerator,
    `${server.url}/v1/batch`,
    server.writeKey,
    String(perRequest),
    String(connections),
    String(durationMs),
    userId,
  ])

/** Stores `count` calls of `userId`, 100 a request, 8 requests at a time. */
async function seedCalls(server: Server, userId: string, count: number): Promise<void> {
  const authorization = `Basic ${Buffer.from(`${server.writeKey}:`).toString('base64')}`
  let next = 0
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < count) {
        const start = next
        next += 100
        const batch = Array.from({ length: Math.min(100, count - start) }, (_, i) => ({
          type: 'track',
          userId,
          event: 'Seeded',
          properties: { n: start + i },
          messageId: `seed-${start + i}`,
        }))
        const response = await fetch(`${server.url}/v1/batch`, {
          method: 'POST',
          headers: { authorization, 'content-type': 'application/json' },
          body: JSON.stringify({ batch }),
        })
        if (response.status !== 200) throw new Error(`seeding: ${response.status} ${await response.text()}`)
      }
    }),
  )
}

const rate = (results: LoadResult[]) =>
  results.reduce((sum, r) => sum + r.events, 0) / results.reduce((sum, r) => sum + r.seconds, 0)

async function measureSuppression() {
  const plain = await startSluice()
  const suppressing = await startSluice()
  try {
    for (let at = 0; at < suppressedIds; at += 5_000) {
      const subjectIds = Array.from({ length: 5_000 }, (_, i) => `suppressed-${at + i}`)
      await api<RegulationView>(suppressing, 'POST', '/regulations', {
        regulationType: 'SUPPRESS_ONLY',
        subjectIds,
      })
    }
    const { suppressions } = await api<{ suppressions: SuppressionView[] }>(
      suppressing,
      'GET',
      '/suppressions',
    )
    if (suppressions.length !== suppressedIds) throw new Error(`${suppressions.length} suppressions stored`)
    await load(plain, 500)
    await load(suppressing, 500)
    // Pairs of rounds, in alternating order; the figure is the median of the pairs' ratios, so a burst
    // of load from elsewhere on the machine spoils one pair, not the result.
    const without: LoadResult[] = []
    const withIds: LoadResult[] = []
    const ratios: number[] = []
    for (let round = 0; round < rounds; round++) {
      const first = round % 2 === 0 ? plain : suppressing
      const second = first === plain ? suppressing : plain
      const a = await load(first, roundMs)
      const b = await load(second, roundMs)
      const [none, some] = first === plain ? [a, b] : [b, a]
      without.push(none)
      withIds.push(some)
      ratios.push(some.eventsPerSecond / none.eventsPerSecond)
    }
    ratios.sort((x, y) => x - y)
    const median = ratios[Math.floor(ratios.length / 2)]!
    const none = rate(without)
    const some = rate(withIds)
    return {
      suppressedIds,
      withoutSuppressions: {
        eventsPerSecond: Math.round(none),
        errors: without.reduce((s, r) => s + r.errors, 0),
      },
      withSuppressions: {
        eventsPerSecond: Math.round(some),
        errors: withIds.reduce((s, r) => s + r.errors, 0),
      },
      pairRatios: ratios.map((r) => Number(r.toFixed(3))),
      ratio: Number(median.toFixed(3)),
      goal: 0.95,
    }
  } finally {
    await plain.close()
    await suppressing.close()
  }
}

async function measureErasure() {
  const server = await startSluice()
  try {
    await seedCalls(server, 'erase-me', erasedCalls)
    await load(server, 500, 'someone-else')
    const before = await load(server, roundMs, 'someone-else')
    const started = performance.now()
    const { id } = await api<RegulationView>(server, 'POST', '/regulations', {
      regulationType: 'DELETE_ONLY',
      subjectIds: ['erase-me'],
    })
    // One load run while the erasure goes on; it must still be going when the run ends, or the figure
    // would include time without erasure.
    const during = await load(server, roundMs, 'someone-else')
    const stillErasing =
      (await api<RegulationView>(server, 'GET', `/regulations/${id}`)).status !== 'FINISHED'
    let regulation: RegulationView
    do {
      await new Promise((resolve) => setTimeout(resolve, 200))
      regulation = await api<RegulationView>(server, 'GET', `/regulations/${id}`)
    } while (regulation.status === 'INITIALIZED' || regulation.status === 'RUNNING')
    const erasureSeconds = (performance.now() - started) / 1000
    if (regulation.erased.messages !== erasedCalls) {
      throw new Error(`erased ${regulation.erased.messages} of ${erasedCalls} calls`)
    }
    const duringRate = during.eventsPerSecond
    return {
      erasedCalls,
      erasureSeconds: Number(erasureSeconds.toFixed(2)),
      before: { eventsPerSecond: Math.round(before.eventsPerSecond), errors: before.errors },
      during: {
        eventsPerSecond: Math.round(duringRate),
        errors: during.errors,
        stillErasingAtTheEnd: stillErasing,
      },
      ratio: Number((duringRate / before.eventsPerSecond).toFixed(3)),
      goal: 0.8,
    }
  } finally {
    await server.close()
  }
}

const suppression = await measureSuppression()
const erasure = await measureErasure()
const result = {
  scenario: 'privacy',
  quick,
  machine: machine(),
  load: { connections, perRequest, roundMs, rounds },
  suppression,
  erasure,
}
/** What bench/results/privacy.json holds; the suite's figures are read from it (bench/lib/suite-scenarios.ts). */
export type PrivacyResult = typeof result
console.log(
  [
    `Privacy benchmark (${result.machine.cpus} CPU cores, Node ${result.machine.node}${quick ? ', quick' : ''})`,
    `Suppression: ${suppression.withSuppressions.eventsPerSecond} events/s with ${suppressedIds.toLocaleString('en')} suppressed ids vs ${suppression.withoutSuppressions.eventsPerSecond} without: ratio ${suppression.ratio} (goal ≥ 0.95)`,
    `Erasure: ${erasure.during.eventsPerSecond} events/s while ${erasedCalls.toLocaleString('en')} calls of one user were erased (${erasure.erasureSeconds} s) vs ${erasure.before.eventsPerSecond} before: ratio ${erasure.ratio} (goal ≥ 0.8)`,
  ].join('\n'),
)
await mkdir(join(import.meta.dirname, 'results'), { recursive: true })
await writeFile(
  join(import.meta.dirname, 'results', quick ? 'privacy.quick.json' : 'privacy.json'),
  `${JSON.stringify(result, null, 2)}\n`,
)
