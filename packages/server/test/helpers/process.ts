import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { after } from 'node:test'

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

/**
 * How long a child may take to start or to run a CLI command: a cold start of the TypeScript sources
 * takes a few seconds idle and many times that on a loaded 2-core machine.
 */
export const CHILD_START_MS = 90_000
/** How long a child may take to exit after SIGTERM before it is killed (its own shutdown timeout is 25 s). */
export const CHILD_STOP_MS = 40_000

/** Children still running: none may outlive its test file (its pipes would keep the file from ever ending). */
const running = new Set<ChildProcess>()
after(async () => {
  await Promise.all([...running].map((child) => stopProcess(child).catch(() => {})))
})

function track(child: ChildProcess): void {
  running.add(child)
  child.once('exit', () => running.delete(child))
}

/** SIGTERM, then SIGKILL if it has not exited within `CHILD_STOP_MS`; resolves once it has exited. */
export async function stopProcess(child: ChildProcess, stopMs = CHILD_STOP_MS): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), stopMs)
  try {
    await exited
  } finally {
    clearTimeout(timer)
  }
}

/** Kills a child that failed to start, and waits for it to be gone. */
async function killNow(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGKILL')
  await exited
}

/**
 * Runs `sluice start` as a real child process on a random port and waits for its banner
 * (`CHILD_START_MS` at most; a child that did not start is killed, never left running).
 */
export async function spawnSluice(
  env: Record<string, string>,
  { entry = CLI, nodeArgs = [], ipc = false }: SpawnSluiceOptions = {},
): Promise<SluiceProcess> {
  const child = spawn(process.execPath, [...nodeArgs, entry, 'start'], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  })
  track(child)
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
    const timer = setTimeout(
      () => reject(new Error(`sluice did not start within ${CHILD_START_MS} ms:\n${stdout}\n${stderr}`)),
      CHILD_START_MS,
    )
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
  }).catch(async (error: unknown) => {
    await killNow(child)
    throw error
  })
  return { child, url, output: () => stdout + stderr, exited }
}

/** Runs a CLI command to completion (`CHILD_START_MS` at most: past it, it is killed and the call fails). */
export async function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  track(child)
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString()
  })
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString()
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_START_MS)
  const [code, signal] = await once(child, 'exit').finally(() => clearTimeout(timer))
  if (signal === 'SIGKILL' && code === null) {
    throw new Error(
      `sluice ${args.join(' ')} did not finish within ${CHILD_START_MS} ms:\n${stdout}\n${stderr}`,
    )
  }
  return { code: code as number, stdout, stderr }
}
