import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'

export const CLI = join(import.meta.dirname, '../../src/cli/main.ts')

export interface SluiceProcess {
  child: ChildProcess
  url: string
  /** Everything the process printed so far: its stdout, then its stderr. */
  output(): string
  /** Resolves with the exit code (or the signal name). */
  exited: Promise<number | string>
}

export interface SpawnSluiceOptions {
  /** The CLI to run. Default: the TypeScript source (`CLI`); the built JavaScript, say, when told. */
  entry?: string
  /** Node options put before the entry, e.g. `--expose-gc` or `--import <probe>`. Default: none. */
  nodeArgs?: string[]
  /** Opens an IPC channel to the child, for a probe it loaded to answer through. Default: false. */
  ipc?: boolean
}

/** Runs `sluice start` as a real child process on a random port and waits for its banner (15 s at most). */
export async function spawnSluice(
  env: Record<string, string>,
  { entry = CLI, nodeArgs = [], ipc = false }: SpawnSluiceOptions = {},
): Promise<SluiceProcess> {
  const child = spawn(process.execPath, [...nodeArgs, entry, 'start'], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string)
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sluice did not start:\n${stdout}\n${stderr}`)), 15_000)
    const check = () => {
      const match = /listening on (http:\/\/[^\s]+)/.exec(stdout)
      if (match) {
        clearTimeout(timer)
        resolve(match[1]!)
      }
    }
    child.stdout!.on('data', check)
    exited.then(() => {
      clearTimeout(timer)
      reject(new Error(`sluice exited before starting:\n${stdout}\n${stderr}`))
    })
  })
  return { child, url, output: () => stdout + stderr, exited }
}

/** Runs a CLI command to completion. */
export async function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString()
  })
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString()
  })
  const [code] = await once(child, 'exit')
  return { code: code as number, stdout, stderr }
}
