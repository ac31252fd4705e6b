/**
 * `sluice demo`: watch Sluice work end to end on one machine, in a few seconds.
 *
 * 1. Starts a webhook receiver on 127.0.0.1 that checks every request's `X-Signature` with
 *    `verifySignature` (the helper receivers are told to use) and answers 401 when it does not verify.
 * 2. Starts Sluice in-process on a temporary SQLite data dir with private destinations allowed (or
 *    uses a running Sluice given by `baseUrl` and `adminToken`).
 * 3. Creates a source and a Webhooks destination with a shared secret, pointing at the receiver,
 *    through the management API.
 * 4. Sends one call of every type through the Tracking API, as an SDK would.
 * 5. Prints each call as it arrived (signature ✓/✗), then the destination's delivery records.
 * 6. Shuts down and removes what it made (the temporary data dir, or the source and destination it
 *    created on the running Sluice).
 *
 * Everything goes over real HTTP, so the demo exercises exactly what a user's setup does.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSluice } from '../app/server.ts'
import { loadConfig } from '../config.ts'
import type { MessageType } from '../domain/messages.ts'
import type { DeliveryStatsView, DeliveryView } from '../manage/delivery-schemas.ts'
import type { DestinationView } from '../manage/destination-schemas.ts'
import type { SourceView } from '../manage/source-schemas.ts'
import { type ManagementClient, managementClient, sendCall } from './api-client.ts'
import { type DemoArrival, startDemoReceiver } from './demo-receiver.ts'

export interface DemoOptions {
  /**
   * A running Sluice to use instead of starting one in-process, e.g. `http://127.0.0.1:8080`. It must
   * run on this machine with `SLUICE_ALLOW_PRIVATE_DESTINATIONS=true`, since the receiver listens on
   * 127.0.0.1.
   */
  baseUrl?: string
  /** The admin token of the Sluice at `baseUrl`; required with it. */
  adminToken?: string
  /** How long to wait for all six calls to arrive. Default 10 s. */
  timeoutMs?: number
  /** Where the progress lines go. Default: stdout. */
  log?: (line: string) => void
}

export type { DemoArrival }

export interface DemoDelivery {
  id: number
  type: string
  messageId: string
  status: string
  attemptCount: number
  /** Of the last attempt. */
  statusCode: number | null
  latencyMs: number | null
}

export interface DemoResult {
  /** True when all six calls arrived with a verified signature. */
  ok: boolean
  /** In order of arrival. */
  arrivals: DemoArrival[]
  /** The destination's delivery records at the end, newest first. */
  deliveries: DemoDelivery[]
  stats: DeliveryStatsView
}

const DEMO_USER = 'demo-user-1'

/** One call of every type, as an app would send them (the Tracking API adds timestamps and ids). */
export const DEMO_CALLS: ReadonlyArray<{ type: MessageType; call: Record<string, unknown> }> = [
  {
    type: 'identify',
    call: { userId: DEMO_USER, traits: { name: 'Ada Lovelace', email: 'ada@example.com', plan: 'pro' } },
  },
  {
    type: 'track',
    call: {
      userId: DEMO_USER,
      event: 'Order Completed',
      properties: { orderId: '1001', total: 42.5, currency: 'EUR' },
    },
  },
  {
    type: 'page',
    call: {
      userId: DEMO_USER,
      name: 'Pricing',
      properties: { url: 'https://example.com/pricing', path: '/pricing', title: 'Pricing' },
    },
  },
  {
    type: 'screen',
    call: {
      userId: DEMO_USER,
      name: 'Home',
      context: {
        device: { model: 'Pixel 8', type: 'android' },
        os: { name: 'Android', version: '15' },
        app: { build: '42', name: 'Demo App', version: '1.0.0' },
      },
    },
  },
  {
    type: 'group',
    call: { userId: DEMO_USER, groupId: 'acme', traits: { name: 'Acme Inc', employees: 120 } },
  },
  { type: 'alias', call: { previousId: 'anon-7f3a', userId: DEMO_USER } },
]

/** Runs the demo; rejects with a message saying what went wrong if the calls do not all arrive. */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`))
  const timeoutMs = options.timeoutMs ?? 10_000
  if (options.baseUrl !== undefined && !options.adminToken) {
    throw new Error(
      'The demo needs the admin token of the Sluice at baseUrl: pass adminToken (sluice demo --url URL --admin-token TOKEN).',
    )
  }

  const secret = randomBytes(16).toString('hex')
  const receiver = await startDemoReceiver(secret)
  const cleanups: Array<() => Promise<unknown>> = [() => receiver.close()]
  try {
    const target = await startTarget(options, cleanups)
    const api = managementClient(target.baseUrl, target.adminToken)

    const source = await api<SourceView>('POST', '/sources', { name: 'Sluice demo' })
    const destination = await api<DestinationView>('POST', '/destinations', {
      name: 'Sluice demo receiver',
      type: 'webhooks',
      sourceIds: [source.id],
      settings: { webhooks: [{ url: receiver.url }], sharedSecret: secret },
    })
    if (options.baseUrl !== undefined) {
      // Deleting the source also deletes its messages and deliveries.
      cleanups.push(
        () => api('DELETE', `/destinations/${destination.id}`).catch(() => {}),
        () => api('DELETE', `/sources/${source.id}`).catch(() => {}),
      )
    }

    log('Sluice demo')
    log(`  Sluice       ${target.baseUrl}${target.inProcess ? ' (in-process, temporary data dir)' : ''}`)
    log(`  Receiver     ${receiver.url} (checks X-Signature with the shared secret)`)
    log(`  Source       ${source.id}`)
    log(`  Destination  ${destination.id} (Webhooks, signed)`)
    log('')

    for (const { type, call } of DEMO_CALLS) {
      await sendCall(target.baseUrl, source.writeKey, type, { ...call, messageId: randomUUID() })
    }
    log(`Sent ${DEMO_CALLS.map((c) => c.type).join(', ')} through the Tracking API.`)
    log('')

    const arrived = await receiver.waitFor(DEMO_CALLS.length, timeoutMs)
    if (!arrived) {
      throw new Error(await explainMissing(api, destination.id, receiver.arrivals, timeoutMs))
    }

    log('Arrived at the receiver:')
    for (const arrival of receiver.arrivals) {
      const mark = arrival.signatureVerified ? 'signature ✓' : 'signature ✗'
      log(`  ${arrival.type.padEnd(8)}  ${arrival.messageId}  ${mark}  ${compactBody(arrival.body)}`)
    }
    log('')

    // The receiver answers before Sluice records the outcome: give the records a moment to catch up.
    const stats = await settledStats(api, destination.id, DEMO_CALLS.length)
    const deliveries = (
      await api<{ deliveries: DeliveryView[] }>('GET', `/destinations/${destination.id}/deliveries`)
    ).deliveries.map(summarize)
    log(`Deliveries (GET /api/v1/destinations/${destination.id}/deliveries):`)
    for (const d of deliveries) {
      const answer = d.statusCode === null ? 'no answer' : `HTTP ${d.statusCode}`
      const attempts = `${d.attemptCount} attempt${d.attemptCount === 1 ? '' : 's'}`
      log(
        `  #${String(d.id).padEnd(5)} ${d.type.padEnd(8)}  ${d.status.padEnd(9)}  ${attempts}  ${answer}  ${d.latencyMs ?? '-'} ms`,
      )
    }
    log(
      `Counters: delivered ${stats.delivered}, pending ${stats.pending}, retrying ${stats.retrying}, ` +
        `failed ${stats.failed} (dead-lettered ${stats.deadLettered}); ` +
        `latency p50 ${stats.latencyP50Ms ?? '-'} ms, p95 ${stats.latencyP95Ms ?? '-'} ms`,
    )
    log('')

    const arrivals = [...receiver.arrivals]
    const ok = arrivals.length === DEMO_CALLS.length && arrivals.every((a) => a.signatureVerified)
    log(
      ok
        ? `All ${DEMO_CALLS.length} calls arrived, each with a valid signature.`
        : 'Some signatures did not verify: the receiver answered 401 to those requests.',
    )
    return { ok, arrivals, deliveries, stats }
  } finally {
    // Reverse order: delete records before stopping the Sluice that holds them. Every step runs even
    // if one fails, and a failure here never hides the error that ended the demo.
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {})
  }
}

// ---------------------------------------------------------------- the Sluice it talks to

interface Target {
  baseUrl: string
  adminToken: string
  inProcess: boolean
}

async function startTarget(options: DemoOptions, cleanups: Array<() => Promise<unknown>>): Promise<Target> {
  if (options.baseUrl !== undefined) {
    return {
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      adminToken: options.adminToken ?? '',
      inProcess: false,
    }
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-demo-'))
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }))
  // Defaults only, not the environment: the demo must never touch the user's own database.
  const sluice = await createSluice({
    ...loadConfig({}),
    port: 0,
    host: '127.0.0.1',
    dataDir,
    logLevel: 'silent',
    adminToken: randomBytes(24).toString('base64url'),
    allowPrivateDestinations: true,
  })
  cleanups.push(() => sluice.close())
  const baseUrl = await sluice.listen()
  return { baseUrl, adminToken: sluice.adminToken.value, inProcess: true }
}

// ---------------------------------------------------------------- delivery records

function summarize(record: DeliveryView): DemoDelivery {
  const last = record.attempts.at(-1)
  return {
    id: record.id,
    type: record.type,
    messageId: record.messageId,
    status: record.status,
    attemptCount: record.attemptCount,
    statusCode: last?.statusCode ?? null,
    latencyMs: last?.latencyMs ?? null,
  }
}

/** The counters once every delivery is final, or as they are after 2 s. */
async function settledStats(
  api: ManagementClient,
  destinationId: string,
  expected: number,
): Promise<DeliveryStatsView> {
  const end = Date.now() + 2_000
  for (;;) {
    const stats = await api<DeliveryStatsView>('GET', `/destinations/${destinationId}/stats`)
    if (stats.delivered + stats.failed >= expected || Date.now() >= end) return stats
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Why the calls did not all arrive, from the delivery records. */
async function explainMissing(
  api: ManagementClient,
  destinationId: string,
  arrivals: DemoArrival[],
  timeoutMs: number,
): Promise<string> {
  const arrivedTypes = new Set(arrivals.map((a) => a.type))
  const missing = DEMO_CALLS.map((c) => c.type).filter((type) => !arrivedTypes.has(type))
  const lines = [
    `Only ${arrivals.length} of ${DEMO_CALLS.length} calls reached the receiver within ${timeoutMs / 1000} s; missing: ${missing.join(', ')}.`,
  ]
  const { deliveries } = await api<{ deliveries: DeliveryView[] }>(
    'GET',
    `/destinations/${destinationId}/deliveries`,
  ).catch(() => ({ deliveries: [] as DeliveryView[] }))
  for (const d of deliveries.filter((each) => missing.includes(each.type as MessageType))) {
    const last = d.attempts.at(-1)
    const why = last
      ? `${last.errorKind ?? 'ok'}: ${last.errorText ?? `HTTP ${last.statusCode}`}`
      : 'not attempted yet'
    lines.push(`  ${d.type}: ${d.status}, ${d.attemptCount} attempts; last: ${why}`)
  }
  if (deliveries.some((d) => d.attempts.some((a) => a.errorKind === 'ssrf'))) {
    lines.push(
      'That Sluice refuses loopback destinations: start it with SLUICE_ALLOW_PRIVATE_DESTINATIONS=true, or run `sluice demo` without --url.',
    )
  }
  return lines.join('\n')
}

/** The members that differ per type, on one line: the common ones (context, ids, time) left out. */
function compactBody(body: Record<string, unknown>): string {
  const { version: _v, type, messageId: _m, timestamp: _ts, context, ...rest } = body
  if (type === 'screen' && typeof context === 'object' && context !== null) {
    // A screen call's device, OS and app are part of its documented shape.
    const { device, os, app } = context as Record<string, unknown>
    rest.context = { device, os, app }
  }
  const text = JSON.stringify(rest)
  return text.length > 160 ? `${text.slice(0, 159)}…` : text
}
