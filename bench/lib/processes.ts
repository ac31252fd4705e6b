import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { cpus } from 'node:os'
import { fileURLToPath } from 'node:url'

/** The `sluice` command, as the package exports it, for `startProcess([SLUICE_CLI, 'start'], …)`. */
export const SLUICE_CLI = fileURLToPath(import.meta.resolve('@sluice/server/cli'))

/** Starts a child Node process and resolves with it once its stdout matches `ready`. */
export async function startProcess(
  args: string[],
  ready: RegExp,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let output = ''
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const found = ready.exec(output)
      if (found) resolve(found)
    })
    child.once('exit', (code) =>
      reject(new Error(`${args.join(' ')} exited (${code}) before it was ready:\n${output}`)),
    )
  })
  return { child, match }
}

/** Runs a child Node process to completion and parses the last line of its stdout as JSON. */
export async function runJson<T>(args: string[], env: Record<string, string> = {}): Promise<T> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  const [code] = await once(child, 'exit')
  if (code !== 0) throw new Error(`${args.join(' ')} exited with ${code}:\n${output}`)
  return JSON.parse(output.trim().split('\n').at(-1)!) as T
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  child.kill('SIGTERM')
  await once(child, 'exit')
}

export function machine(): { cpus: number; model: string; node: string } {
  return { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version }
}
