/** `sluice start`: runs the server until SIGTERM or SIGINT, and prints how to send a first event. */
import { settleWhenIdle } from '../app/heap.ts'
import { createSluice, type Sluice } from '../app/server.ts'
import type { Config } from '../config.ts'
import { SourceService } from '../domain/source-service.ts'
import type { Source } from '../domain/sources.ts'

/** The earliest the start-up's leftovers are collected after the announcement, once idle (app/heap.ts). */
const SETTLE_AFTER_MS = 2_000

export async function start(config: Config): Promise<number> {
  // Signal handlers come first, so a signal during start-up also shuts down cleanly.
  let sluice: Sluice | undefined
  let stopping = false
  const stop = (signal: string) => {
    if (stopping || !sluice) {
      if (stopping) sluice?.logger.warn({ signal }, 'second signal: exiting without waiting')
      process.exit(stopping ? 1 : 0)
    }
    stopping = true
    sluice.logger.info({ signal }, 'shutting down: finishing in-flight requests')
    setTimeout(() => {
      sluice?.logger.error(
        { signal, timeoutMs: config.shutdownTimeoutMs },
        'graceful shutdown did not finish in time (SLUICE_SHUTDOWN_TIMEOUT_MS): exiting; claimed deliveries return after their lease',
      )
      process.exit(1)
    }, config.shutdownTimeoutMs).unref()
    sluice.close().then(
      () => process.exit(0),
      (error: unknown) => {
        sluice?.logger.error({ err: error }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))

  sluice = await createSluice(config)
  try {
    await announce(sluice, config)
  } catch (error) {
    // A server that failed to finish starting must not linger, listening but never announced: it is
    // shut down, so the process exits non-zero and its supervisor starts it again.
    await sluice.close().catch(() => {})
    throw error
  }
  // Once the start-up burst is over and the server is idle (never in the middle of traffic).
  settleWhenIdle(SETTLE_AFTER_MS)
  return new Promise<number>(() => {}) // runs until a signal
}

/** Listens, then prints where, and how to send a first event. */
async function announce(sluice: Sluice, config: Config): Promise<void> {
  const address = await sluice.listen()
  const where = `store: ${sluice.store.kind}${sluice.store.kind === 'sqlite' ? `, data: ${config.dataDir}` : ''}`
  if (config.role === 'worker') {
    process.stdout.write(
      `\nSluice worker is delivering (${where}); listening on ${address} for /healthz and /readyz\n`,
    )
    return
  }
  // The server is up: a store that cannot be reached just now (PostgreSQL restarting or out of
  // connections) costs the hint below, not the start. /readyz says when the store is back.
  const source = await firstSource(sluice).catch((error: unknown) => {
    sluice.logger.warn({ err: error }, 'could not read the sources for the start-up message')
    return undefined
  })
  const lines = [
    '',
    `Sluice is listening on ${address} (${where}${config.role === 'api' ? ', role: api' : ''})`,
    sluice.adminToken.generated
      ? `Admin token (shown once; also saved in ${config.dataDir}/admin-token): ${sluice.adminToken.value}`
      : config.adminToken
        ? 'Admin token: the value of SLUICE_ADMIN_TOKEN'
        : `Admin token: in ${config.dataDir}/admin-token`,
    '',
    ...(source === undefined
      ? ['The sources could not be read just now (see /readyz); list them with `sluice sources list`.']
      : source
        ? [
            `Send a first event to source "${source.name}" (${source.id}):`,
            `  curl -u '${source.writeKey}:' -H 'content-type: application/json' \\`,
            `    -d '{"userId":"user-1","event":"Hello Sluice","properties":{"first":true}}' ${address}/v1/track`,
          ]
        : [
            'No source yet: create one with `sluice sources create NAME` and send events with its write key.',
          ]),
    '',
    `API reference: ${address}/api/openapi.json`,
    '',
  ]
  process.stdout.write(lines.join('\n'))
}

/** The source the start-up message shows: the first enabled one; on a fresh embedded store, a new one. */
async function firstSource(sluice: Sluice): Promise<Source | null> {
  const sources = await sluice.store.listSources()
  // A first source is made only on the embedded store: processes sharing PostgreSQL could race to each make one.
  return (
    sources.find((s) => s.enabled) ??
    (sluice.store.kind === 'sqlite'
      ? (await new SourceService(sluice.store).create({ name: 'My first source' })).source
      : null)
  )
}
