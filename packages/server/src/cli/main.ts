#!/usr/bin/env node
/** The `sluice` command: parses the command line and hands over to one command module. */
// First, for its side effect: the heap limits apply while the other modules load.
import './tune-heap.ts'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig } from '../config.ts'
import { ConflictError, NotFoundError, ValidationError } from '../domain/errors.ts'
import { createLogger } from '../lib/logger.ts'
import { openStore } from '../store/open.ts'
import { audiencesCommand } from './audiences.ts'
import { CONFIG_USAGE, ConfigCommandError, configCommand } from './config.ts'
import { runDemo } from './demo.ts'
import { PRIVACY_USAGE, runPrivacy } from './privacy.ts'
import { createSource, listSources } from './sources.ts'
import { start } from './start.ts'

const USAGE = `Usage: sluice <command>

Commands:
  start [--role R]       Start the Sluice server. Roles: all (default), api (Tracking + management
                         APIs), worker (deliveries only); see docs/postgres.md
  sources create NAME    Create a source and print its write key
  sources list           List sources with their write keys
${PRIVACY_USAGE}
  audiences list         List audiences with their status and size
  audiences preview FILE.json
                         How many profiles a definition (or {definition, includeAnonymous}) holds for
                         now, with a sample of their ids; nothing is saved
  audiences show ID      One audience as JSON, with its size
${CONFIG_USAGE}
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
      source: { type: 'string', multiple: true },
      secrets: { type: 'boolean' },
      prune: { type: 'boolean' },
      yaml: { type: 'boolean' },
      'exit-code': { type: 'boolean' },
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
  if (command === 'config') {
    if (sub !== 'export' && sub !== 'plan' && sub !== 'apply') {
      throw new ConfigCommandError(`Unknown config command "${sub ?? ''}". Usage:\n${CONFIG_USAGE}`)
    }
    // A local Sluice that generated its token keeps it in its data directory.
    const adminToken =
      values['admin-token'] ??
      process.env.SLUICE_ADMIN_TOKEN ??
      (await readFile(join(config.dataDir, 'admin-token'), 'utf8').catch(() => '')).trim()
    if (!adminToken) {
      throw new ConfigCommandError(
        'The config commands need the admin token: --admin-token T or SLUICE_ADMIN_TOKEN (or the admin-token file of SLUICE_DATA_DIR, where Sluice keeps the one it generated).',
      )
    }
    return configCommand(sub, rest[0], {
      baseUrl: values.url ?? process.env.SLUICE_URL ?? `http://127.0.0.1:${config.port}`,
      adminToken,
      secrets: values.secrets,
      prune: values.prune,
      yaml: values.yaml,
      json: values.json,
      exitCode: values['exit-code'],
    })
  }
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
  if (command === 'privacy') {
    const store = await openStore(config, createLogger('silent'))
    try {
      return await runPrivacy(store, sub, rest, { sourceIds: values.source, json: values.json })
    } finally {
      await store.close()
    }
  }
  if (command === 'audiences') {
    const store = await openStore(config, createLogger('silent'))
    try {
      return await audiencesCommand(store, sub, rest[0], values.json)
    } finally {
      await store.close()
    }
  }
  console.error(`Unknown command "${positionals.join(' ')}".\n\n${USAGE}`)
  return 1
}

/** Refusals that say what was wrong and how to fix it are printed as just that; anything else in full. */
function describeFailure(error: unknown): unknown {
  if (error instanceof ConfigError) return `Configuration error: ${error.message}`
  const refused =
    error instanceof ValidationError ||
    error instanceof NotFoundError ||
    error instanceof ConflictError ||
    error instanceof ConfigCommandError
  return refused ? error.message : error
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    console.error(describeFailure(error))
    process.exitCode = 1
  },
)
