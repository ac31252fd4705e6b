// A Sluice (embedded SQLite store on its worker thread, delivery engine) for the isolation and
// backlog scenarios, in its own process:
//   node bench/lib/suite-sluice.ts '<json SuiteSluiceOptions>'
// mode "seed": with the engine stopped, creates one source and one webhooks destination per URL in
//   `dataDir` and stores `messages` messages through store.ingest in chunks (each routed to every
//   destination), closes the store and prints {"event":"seeded",...}. A process of its own, so what
//   seeding allocates does not count in the measured process's memory.
// mode "serve": opens `dataDir` as Sluice does at start-up, starts the delivery engine and samples its
//   RSS every 100 ms. On "stop" (a line on stdin) stops the engine (in-flight requests finish and are
//   recorded), counts each destination's deliveries by state and attempts by outcome, and prints
//   {"event":"stopped",...}.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { DatabaseSync } from 'node:sqlite'
import type { Worker } from 'node:worker_threads'
import { type AcceptedMessage, type Config, createSluice, loadConfig } from '@sluice/server'

export type SuiteSluiceOptions =
  | {
      mode: 'seed'
      dataDir: string
      /** One webhooks destination per URL, all connected to the one source. */
      urls: string[]
      /** Messages stored; each makes one delivery per destination. */
      messages: number
      /** Messages per store.ingest call (one transaction). Default 10,000. */
      chunk?: number
    }
  | {
      mode: 'serve'
      dataDir: string
      concurrency?: number
      requestTimeoutMs?: number
      leaseMs?: number
    }

export interface DestinationCounts {
  url: string
  pending: number
  retrying: number
  delivered: number
  failed: number
  /** Attempts answered 2xx, and attempts that were not (timeouts, connection errors, non-2xx). */
  okAttempts: number
  failedAttempts: number
}

export interface SuiteSluiceSeeded {
  event: 'seeded'
  deliveries: number
  seconds: number
}

export interface SuiteSluiceStopped {
  event: 'stopped'
  /** RSS when the store was open and the engine about to start. */
  startRssMb: number
  /** Highest RSS sampled (every 100 ms) from the engine start to the stop. */
  drainPeakRssMb: number
  /** The kernel's high-water mark for the whole process life (VmHWM); null off Linux. */
  lifetimePeakRssMb: number | null
  /**
   * At the sampled peak, in MB: the main thread's V8 heap (committed and used) and external memory,
   * and the SQLite store thread's V8 heap (null when the store has no such thread).
   */
  atPeak: {
    heapTotalMb: number
    heapUsedMb: number
    externalMb: number
    arrayBuffersMb: number
    storeThreadHeapTotalMb: number | null
    storeThreadHeapUsedMb: number | null
  }
  /** Anonymous and file-backed resident memory at the stop (/proc/self/status), MB; null off Linux. */
  atStop: { rssAnonMb: number; rssFileMb: number } | null
  destinations: DestinationCounts[]
}

const options = JSON.parse(process.argv[2] ?? '{}') as SuiteSluiceOptions
const mb = (bytes: number) => Math.round(bytes / 1e6)
const config: Config = {
  ...loadConfig({}),
  dataDir: options.dataDir,
  port: 0,
  logLevel: 'warn',
  allowPrivateDestinations: true,
}

if (options.mode === 'seed') {
  // Durability does not matter for the set-up: fewer fsyncs store the backlog sooner.
  const sluice = await createSluice({ ...config, sqliteSynchronous: 'NORMAL' })
  const { store } = sluice
  const source = await store.createSource({ name: 'bench', enabled: true })
  for (const [i, url] of options.urls.entries()) {
    await store.createDestination({
      name: `receiver ${i}`,
      type: 'webhooks',
      enabled: true,
      sourceIds: [source.id],
      settings: { webhooks: [{ url, headers: {} }], sharedSecret: 'bench-secret' },
    })
  }
  // The same message as bench/lib/drain-backlog.ts, so figures compare with the delivery scenario.
  const started = performance.now()
  const now = Date.now()
  const iso = new Date(now).toISOString()
  const chunk = options.chunk ?? 10_000
  let deliveries = 0
  for (let offset = 0; offset < options.messages; offset += chunk) {
    const messages: AcceptedMessage[] = []
    for (let i = offset; i < Math.min(options.messages, offset + chunk); i++) {
      const messageId = `suite-${i}`
      messages.push({
        sourceId: source.id,
        messageId,
        type: 'track',
        receivedAt: now,
        routeTo: ['webhooks'],
        payloadJson: `{"type":"track","messageId":"${messageId}","userId":"bench-user","event":"Order Completed","properties":{"total":12.5,"currency":"EUR","items":3},"context":{"library":{"name":"bench"},"ip":"127.0.0.1"},"timestamp":"${iso}","receivedAt":"${iso}"}`,
      })
    }
    deliveries += (await store.ingest(messages)).deliveriesCreated
  }
  await sluice.close()
  const seeded: SuiteSluiceSeeded = {
    event: 'seeded',
    deliveries,
    seconds: (performance.now() - started) / 1000,
  }
  process.stdout.write(`${JSON.stringify(seeded)}\n`)
} else {
  await serve(options)
}

async function serve(options: Extract<SuiteSluiceOptions, { mode: 'serve' }>): Promise<void> {
  if (options.concurrency !== undefined) config.deliveryConcurrency = options.concurrency
  if (options.leaseMs !== undefined) config.deliveryLeaseMs = options.leaseMs
  if (options.requestTimeoutMs !== undefined) {
    config.retry = { ...config.retry, requestTimeoutMs: options.requestTimeoutMs }
  }
  const sluice = await createSluice(config)
  const { store, engine } = sluice
  const destinations = await store.listDestinations()

  // Diagnostics only: the ThreadedSqliteStore's worker, to read its thread's heap.
  const storeThread = (store as unknown as { worker?: Worker }).worker
  let peakRss = 0
  let atPeak: SuiteSluiceStopped['atPeak'] = {
    heapTotalMb: 0,
    heapUsedMb: 0,
    externalMb: 0,
    arrayBuffersMb: 0,
    storeThreadHeapTotalMb: null,
    storeThreadHeapUsedMb: null,
  }
  const sample = () => {
    const usage = process.memoryUsage()
    if (usage.rss <= peakRss) return
    peakRss = usage.rss
    const peak: SuiteSluiceStopped['atPeak'] = {
      heapTotalMb: mb(usage.heapTotal),
      heapUsedMb: mb(usage.heapUsed),
      externalMb: mb(usage.external),
      arrayBuffersMb: mb(usage.arrayBuffers),
      storeThreadHeapTotalMb: null,
      storeThreadHeapUsedMb: null,
    }
    atPeak = peak
    storeThread
      ?.getHeapStatistics()
      .then((heap) => {
        peak.storeThreadHeapTotalMb = mb(heap.total_heap_size)
        peak.storeThreadHeapUsedMb = mb(heap.used_heap_size)
      })
      .catch(() => {})
  }
  const startRssMb = mb(process.memoryUsage().rss)
  const sampler = setInterval(sample, 100)
  engine.start()
  process.stdout.write(`${JSON.stringify({ event: 'started' })}\n`)

  const stopAndReport = async () => {
    await engine.stop()
    clearInterval(sampler)
    sample()
    const status = await procStatus()
    await sluice.close()
    // Read the closed database directly for what the store API does not expose (attempts by outcome).
    const db = new DatabaseSync(join(options.dataDir, 'sluice.db'), { readOnly: true })
    const byStatus = db
      .prepare(
        'SELECT destination_id AS id, status, COUNT(*) AS n FROM deliveries GROUP BY destination_id, status',
      )
      .all() as { id: string; status: string; n: number }[]
    const attempts = db
      .prepare(
        `SELECT destination_id AS id,
                SUM(CASE WHEN status_code BETWEEN 200 AND 299 THEN 1 ELSE 0 END) AS ok,
                SUM(CASE WHEN status_code BETWEEN 200 AND 299 THEN 0 ELSE 1 END) AS failed
         FROM attempts GROUP BY destination_id`,
      )
      .all() as { id: string; ok: number; failed: number }[]
    db.close()
    const report: SuiteSluiceStopped = {
      event: 'stopped',
      startRssMb,
      drainPeakRssMb: mb(peakRss),
      lifetimePeakRssMb: status.VmHWM ?? null,
      atPeak,
      atStop:
        status.RssAnon === undefined ? null : { rssAnonMb: status.RssAnon, rssFileMb: status.RssFile ?? 0 },
      // In creation order (the seed's URL order): destination names are "receiver <i>".
      destinations: destinations
        .sort((a, b) => Number(a.name.split(' ')[1]) - Number(b.name.split(' ')[1]))
        .map((destination) => {
          const count = (status: string) =>
            byStatus.find((row) => row.id === destination.id && row.status === status)?.n ?? 0
          const attempt = attempts.find((row) => row.id === destination.id)
          return {
            url: destination.settings.webhooks[0]!.url,
            pending: count('pending'),
            retrying: count('retrying'),
            delivered: count('delivered'),
            failed: count('failed'),
            okAttempts: attempt?.ok ?? 0,
            failedAttempts: attempt?.failed ?? 0,
          }
        }),
    }
    process.stdout.write(`${JSON.stringify(report)}\n`)
    process.exit(0)
  }

  let stopping = false
  const stop = () => {
    if (stopping) return
    stopping = true
    void stopAndReport()
  }
  const lines = createInterface({ input: process.stdin })
  lines.on('line', (line) => {
    if (line.trim() === 'stop') stop()
  })
  lines.on('close', stop) // the parent went away
}

/** Fields of /proc/self/status in MB (Linux); empty elsewhere. */
async function procStatus(): Promise<Record<string, number>> {
  try {
    const status = await readFile('/proc/self/status', 'utf8')
    const fields: Record<string, number> = {}
    for (const [, name, kb] of status.matchAll(/^(\w+):\s+(\d+) kB$/gm)) fields[name!] = mb(Number(kb) * 1024)
    return fields
  } catch {
    return {}
  }
}
