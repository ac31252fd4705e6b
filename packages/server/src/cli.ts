#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { runDemo } from './app/demo.ts'
import { createSluice, type Sluice } from './app/server.ts'
import { ConfigError, loadConfig } from './config.ts'
import { createLogger } from './lib/logger.ts'
import { openStore } from './store/open.ts'
import type { Store } from './store/store.ts'

const USAGE = `Usage: sluice <command>

Commands:
  start [--role R]       Start the Sluice server. Roles: all (default), api (Tracking + management
                         APIs), worker (deliveries only); see "Running on PostgreSQL" in the README
  sources create NAME    Create a source and print its write key
  sources list           List sources with their write keys
  demo [--url URL --admin-token T]
                         Send one call of every type to a local receiver through Sluice and show
                         what arrived, signatures verified (in-process Sluice unless --url is given)

Configuration comes from environment variables; see the README's configuration table.`

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
      url: { type: 'string' },
      role: { type: 'string' },
      'admin-token': { type: 'string' },
    },
  })
  const [command, sub, ...rest] = positionals
  if (values.help || !command) {
    console.log(USAGE)
    return command || values.help ? 0 : 1
  }
  if (command === 'demo') {
    // Against a running Sluice with --url, or an in-process one on a temp dir (the environment is not read).
    const adminToken = values['admin-token'] ?? process.env.SLUICE_ADMIN_TOKEN
    const result = await runDemo(
      values.url ? { baseUrl: values.url, ...(adminToken ? { adminToken } : {}) } : {},
    )
    return result.ok ? 0 : 1
  }
  const config = loadConfig(values.role ? { ...process.env, SLUICE_ROLE: values.role } : process.env)
  if (command === 'start') return start(config)
  if (command === 'sources' && (sub === 'create' || sub === 'list')) {
    const logger = createLogger('silent')
    const store = await openStore(config, logger)
    try {
      return sub === 'create'
        ? await createSource(store, rest.join(' '), values.json)
        : await listSources(store, values.json)
    } finally {
      await store.close()
    }
  }
  console.error(`Unknown command "${positionals.join(' ')}".\n\n${USAGE}`)
  return 1
}

async function start(config: ReturnType<typeof loadConfig>): Promise<number> {
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
  const address = await sluice.listen()
  const where = `store: ${sluice.store.kind}${sluice.store.kind === 'sqlite' ? `, data: ${config.dataDir}` : ''}`
  if (config.role === 'worker') {
    process.stdout.write(
      `\nSluice worker is delivering (${where}); listening on ${address} for /healthz and /readyz\n`,
    )
    return new Promise<number>(() => {}) // runs until a signal
  }
  const sources = await sluice.store.listSources()
  // A first source is made only on the embedded store: processes sharing PostgreSQL could race to each make one.
  const source =
    sources.find((s) => s.enabled) ??
    (sluice.store.kind === 'sqlite'
      ? await sluice.store.createSource({ name: 'My first source', enabled: true })
      : null)
  const lines = [
    '',
    `Sluice is listening on ${address} (${where}${config.role === 'api' ? ', role: api' : ''})`,
    sluice.adminToken.generated
      ? `Admin token (shown once; also saved in ${config.dataDir}/admin-token): ${sluice.adminToken.value}`
      : config.adminToken
        ? 'Admin token: the value of SLUICE_ADMIN_TOKEN'
        : `Admin token: in ${config.dataDir}/admin-token`,
    '',
    ...(source
      ? [
          `Send a first event to source "${source.name}" (${source.id}):`,
          `  curl -u '${source.writeKey}:' -H 'content-type: application/json' \\`,
          `    -d '{"userId":"user-1","event":"Hello Sluice","properties":{"first":true}}' ${address}/v1/track`,
        ]
      : ['No source yet: create one with `sluice sources create NAME` and send events with its write key.']),
    '',
    `API reference: ${address}/api/openapi.json`,
    '',
  ]
  process.stdout.write(lines.join('\n'))
  return new Promise<number>(() => {}) // runs until a signal
}

async function createSource(store: Store, name: string, json: boolean | undefined): Promise<number> {
  if (!name.trim()) {
    console.error('Give the source a name: sluice sources create "My app"')
    return 1
  }
  const source = await store.createSource({ name: name.trim(), enabled: true })
  if (json) console.log(JSON.stringify(source))
  else console.log(`Created source "${source.name}" (${source.id})\nWrite key: ${source.writeKey}`)
  return 0
}

async function listSources(store: Store, json: boolean | undefined): Promise<number> {
  const sources = await store.listSources()
  if (json) {
    console.log(JSON.stringify(sources))
    return 0
  }
  if (sources.length === 0) console.log('No sources yet: sluice sources create "My app"')
  for (const s of sources) {
    console.log(`${s.id}  ${s.enabled ? 'enabled ' : 'disabled'}  ${s.writeKey}  ${s.name}`)
  }
  return 0
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : error)
    process.exitCode = 1
  },
)
