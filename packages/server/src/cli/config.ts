/**
 * `sluice config export|plan|apply`: configuration as code against a running Sluice's management API
 * (docs/config-as-code.md). Files are YAML or JSON (`.json` is read as JSON, anything else as YAML,
 * of which JSON is a subset). `{"$env": "NAME"}` anywhere in a file is replaced here by the value of
 * the environment variable NAME before the document is sent; the server never reads its own
 * environment for a document.
 */
import { readFile } from 'node:fs/promises'
import { parse as parseYaml, stringify as toYaml } from 'yaml'
import type { ConfigChange } from '../domain/config-document.ts'
import { isJsonObject } from '../lib/json-object.ts'
import { escapePointerToken } from '../lib/json-pointer.ts'

export const CONFIG_USAGE = `  config export [--secrets] [--yaml]
                         Print the configuration (sources, destinations, computed traits,
                         audiences) as one document keyed by names; secrets as placeholders
                         unless --secrets
  config plan FILE [--prune] [--exit-code]
                         Show what applying FILE (YAML or JSON) would change; changes nothing.
                         --exit-code: exit 2 when there are changes (drift checks in CI)
  config apply FILE [--prune]
                         Make those changes, all or nothing; --prune also deletes what FILE
                         leaves out. {"$env": "NAME"} in FILE is read from this environment
                         The config commands talk to a running Sluice: --url (default SLUICE_URL,
                         else http://127.0.0.1:PORT) and --admin-token (default SLUICE_ADMIN_TOKEN)`

export interface ConfigCommandOptions {
  baseUrl: string
  adminToken: string
  secrets?: boolean | undefined
  prune?: boolean | undefined
  yaml?: boolean | undefined
  json?: boolean | undefined
  /** `plan` exits 2 when there are changes. Default: 0 either way. */
  exitCode?: boolean | undefined
  /** Where `$env` values come from. Default: this process's environment. */
  env?: NodeJS.ProcessEnv
}

/** A refusal the CLI prints as is (no stack): a bad file, a missing variable, the server's 4xx. */
export class ConfigCommandError extends Error {}

export async function configCommand(
  sub: string | undefined,
  file: string | undefined,
  options: ConfigCommandOptions,
): Promise<number> {
  if (sub === 'export') {
    const document = await call(options, 'GET', `/config${options.secrets ? '?secrets=include' : ''}`)
    process.stdout.write(options.yaml ? toYaml(document) : `${JSON.stringify(document, null, 2)}\n`)
    return 0
  }
  if ((sub === 'plan' || sub === 'apply') && file) {
    const document = resolveEnvironment(await readDocument(file), options.env ?? process.env)
    if (options.prune) document.prune = true
    const { changes } = (await call(options, 'POST', `/config/${sub}`, document)) as {
      changes: ConfigChange[]
    }
    if (options.json) process.stdout.write(`${JSON.stringify({ changes }, null, 2)}\n`)
    else process.stdout.write(describeChanges(changes, sub === 'apply'))
    return sub === 'plan' && options.exitCode && changes.length > 0 ? 2 : 0
  }
  throw new ConfigCommandError(`Usage:\n${CONFIG_USAGE}`)
}

async function readDocument(file: string): Promise<Record<string, unknown>> {
  const text = await readFile(file, 'utf8').catch((error: Error) => {
    throw new ConfigCommandError(`Cannot read ${file}: ${error.message}`)
  })
  let document: unknown
  try {
    document = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text)
  } catch (error) {
    throw new ConfigCommandError(
      `${file} is not valid ${file.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message}`,
    )
  }
  if (!isJsonObject(document)) {
    throw new ConfigCommandError(`${file} must hold one object such as {"version": 1, "sources": {}}.`)
  }
  return document
}

/** Replaces every `{"$env": "NAME"}` with the variable's value; every one unset is named with its place. */
export function resolveEnvironment(
  document: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): Record<string, unknown> {
  const missing: string[] = []
  const resolve = (value: unknown, pointer: string): unknown => {
    if (Array.isArray(value)) return value.map((item, index) => resolve(item, `${pointer}/${index}`))
    if (!isJsonObject(value)) return value
    const keys = Object.keys(value)
    if (keys.length === 1 && typeof value.$env === 'string') {
      const resolved = env[value.$env]
      if (resolved === undefined || resolved === '') missing.push(`${pointer}: ${value.$env}`)
      return resolved
    }
    return Object.fromEntries(
      keys.map((key) => [key, resolve(value[key], `${pointer}/${escapePointerToken(key)}`)]),
    )
  }
  const resolved = resolve(document, '') as Record<string, unknown>
  if (missing.length > 0) {
    throw new ConfigCommandError(
      `These environment variables are not set (or empty), so their secrets cannot be sent:\n  ${missing.join('\n  ')}\nSet them, then run the command again. Nothing was sent.`,
    )
  }
  return resolved
}

/** The changes for a person: one line per object, one indented line per field. */
export function describeChanges(changes: ConfigChange[], applied: boolean): string {
  if (changes.length === 0) {
    return applied
      ? 'Nothing to change: Sluice already matches the file.\n'
      : 'No changes: Sluice matches the file.\n'
  }
  const signs = { create: '+', update: '~', delete: '-' } as const
  const lines = changes.flatMap((change) => [
    `${signs[change.action]} ${change.action} ${change.section} ${JSON.stringify(change.name)}`,
    ...(change.action === 'update'
      ? change.fields.map(
          (field) => `    ${field.field}: ${JSON.stringify(field.from)} -> ${JSON.stringify(field.to)}`,
        )
      : []),
  ])
  const count = `${changes.length} change${changes.length === 1 ? '' : 's'}`
  return `${lines.join('\n')}\n${applied ? `Applied ${count}.` : `${count} to apply (sluice config apply).`}\n`
}

async function call(
  options: ConfigCommandOptions,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/api/v1${path}`
  let response: Response
  try {
    response = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${options.adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
  } catch (error) {
    throw new ConfigCommandError(
      `Cannot reach Sluice at ${options.baseUrl} (${(error as Error).message}); give its address with --url or SLUICE_URL.`,
    )
  }
  const text = await response.text()
  const parsed = text === '' ? undefined : (JSON.parse(text) as unknown)
  if (!response.ok) {
    const error = isJsonObject(parsed) && isJsonObject(parsed.error) ? parsed.error : {}
    const problems = Array.isArray(error.problems)
      ? (error.problems as { field: string; message: string }[])
          .map((p) => `\n  ${p.field || '/'}: ${p.message}`)
          .join('')
      : ''
    throw new ConfigCommandError(
      `${method} ${path} answered ${response.status}: ${problems === '' ? String(error.message ?? text) : `the document has problems (nothing was applied):${problems}`}`,
    )
  }
  return parsed
}
