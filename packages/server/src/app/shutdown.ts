/**
 * Graceful shutdown (`SIGTERM`, `SIGINT`), in the order that loses nothing:
 *
 * 1. Not ready: `/readyz` answers 503, so load balancers stop sending new requests.
 * 2. At the same time, on two tracks:
 *    - ingest: the listener closes, and keep-alive connections as they go idle; requests in flight
 *      finish, and their commits with them (a 200 is still a commit); a request that arrives on a
 *      busy connection meanwhile gets 503. Then whatever the group commit still holds is committed.
 *    - delivery: the engine stops claiming, hands claimed-but-unsent deliveries back to the store
 *      (other processes take them at once, not after the lease), lets requests in flight finish
 *      (bounded by the request timeout) and commits their outcomes. Deliveries created by the last
 *      commits stay pending for the other processes, or for the next start.
 * 3. Buffered spans are exported; the HTTP client and the store close.
 */
import type { FastifyInstance } from 'fastify'
import type { AlertSender } from '../deliver/alert-sender.ts'
import type { DeliveryEngine } from '../deliver/engine.ts'
import type { WebhookSender } from '../deliver/http-sender.ts'
import type { ReplayRunner } from '../deliver/replay-runner.ts'
import type { GroupCommit } from '../ingest/group-commit.ts'
import type { Tracing } from '../observe/tracing.ts'
import type { ErasureRunner } from '../privacy/erasure-runner.ts'
import type { PrivacyFilter } from '../privacy/privacy-filter.ts'
import type { ProfileWorker } from '../profile/profile-worker.ts'
import type { Store } from '../store/store.ts'
import type { Housekeeper } from './housekeeper.ts'

/** How often connections that went idle during shutdown are closed. */
const IDLE_REAP_INTERVAL_MS = 50

export interface RunningParts {
  app: FastifyInstance
  housekeeper: Housekeeper
  erasure: ErasureRunner
  groupCommit: GroupCommit
  profiles: ProfileWorker
  engine: DeliveryEngine
  replayRunner: ReplayRunner
  alerts: AlertSender
  sender: WebhookSender
  tracing: Tracing
  privacy: PrivacyFilter
  store: Store
}

export class Shutdown {
  private started: Promise<void> | undefined

  /** True from the moment shutdown begins: `/readyz` then answers 503. */
  get stopping(): boolean {
    return this.started !== undefined
  }

  /** Shuts down once; later calls wait for the same shutdown. */
  run(parts: RunningParts): Promise<void> {
    this.started ??= shutDown(parts)
    return this.started
  }
}

async function shutDown(parts: RunningParts): Promise<void> {
  // Once the listener is closed, nothing may be left that keeps Node's event loop alive (the store's
  // worker thread and the engine's timers do not), and Node would exit in the middle of the steps
  // below, with claims unreleased and outcomes unrecorded. This timer holds the process until the end.
  const keepAlive = setInterval(() => {}, 60_000)
  try {
    await shutDownSteps(parts)
  } finally {
    clearInterval(keepAlive)
  }
}

async function shutDownSteps(parts: RunningParts): Promise<void> {
  await parts.housekeeper.stop() // a run in progress finishes before the store closes
  await parts.erasure.stop() // a batch in progress commits; the rest waits for the next start
  const ingest = async () => {
    // Node closes the connections that are idle when closing starts; one whose request finishes later
    // would stay open until its keep-alive ran out (72 s) and hold the exit, so they are reaped as
    // they go idle.
    const reaper = setInterval(() => parts.app.server.closeIdleConnections(), IDLE_REAP_INTERVAL_MS)
    try {
      await parts.app.close()
    } finally {
      clearInterval(reaper)
    }
    await parts.groupCommit.drain()
  }
  // The profile batch in progress commits (or not at all: it is consumed again at the next start).
  await Promise.all([
    ingest(),
    parts.engine.stop(),
    parts.replayRunner.stop(),
    parts.alerts.stop(),
    parts.profiles.stop(),
  ])
  await parts.tracing.shutdown().catch(() => {}) // a collector that is down must not hold the exit
  await parts.sender.close()
  // The engine asked the privacy filter about every claim it sent; nothing asks it any more.
  await parts.privacy.stop()
  await parts.store.close()
}
