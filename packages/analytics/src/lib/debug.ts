/** A debug log line writer; `undefined` when logging is off, so `log?.(…)` skips building the text. */
export type Log = (message: string) => void

/**
 * Whether `namespace` is enabled by a `DEBUG` value, with the `debug` package's rules: names
 * separated by commas or spaces, `*` as a wildcard, and a leading `-` to exclude.
 */
export function debugEnabled(namespace: string, spec: string | undefined): boolean {
  if (!spec) return false
  let enabled = false
  for (const raw of spec.split(/[\s,]+/)) {
    if (!raw) continue
    const exclude = raw.startsWith('-')
    const pattern = exclude ? raw.slice(1) : raw
    if (!matches(pattern, namespace)) continue
    if (exclude) return false
    enabled = true
  }
  return enabled
}

function matches(pattern: string, name: string): boolean {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')
  return new RegExp(`^${escaped}$`).test(name)
}

/** `DEBUG` from the environment, on runtimes that have one (Node and Bun `process.env`, Deno `Deno.env`). */
export function readDebugEnv(): string | undefined {
  const scope = globalThis as {
    process?: { env?: Record<string, string | undefined> }
    Deno?: { env?: { get(name: string): string | undefined } }
  }
  try {
    return scope.process?.env?.DEBUG ?? scope.Deno?.env?.get('DEBUG')
  } catch {
    // Deno without --allow-env throws; no permission means no logging.
    return undefined
  }
}

/** A logger writing `<ISO time> <namespace> <message>` to stderr (console.error), or undefined when off. */
export function createLog(namespace: string, enabled: boolean): Log | undefined {
  if (!enabled) return undefined
  return (message) => console.error(`${new Date().toISOString()} ${namespace} ${message}`)
}
