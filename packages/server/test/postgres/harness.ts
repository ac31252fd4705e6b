/**
 * Multi-process test machinery: Sluice processes with roles, a counting webhook receiver, and a
 * private PostgreSQL cluster that a test may restart without disturbing anyone else.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { chown, mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import { promisify } from 'node:util'
import { CHILD_START_MS, stopProcess } from '../helpers/process.ts'

const CLI = join(import.meta.dirname, '../../src/cli/main.ts')
const run = promisify(execFile)

export interface SluiceChild {
  child: ChildProcess
  url: string
  role: string
  exited: Promise<number | string>
  /** stdout + stderr so far (for failure messages). */
  output(): string
}

/** Pooled PostgreSQL connections of each child (unless the test's env says otherwise). */
export const CHILD_POOL_SIZE = 5

/** Children of this file still running: stopped after its last test, whatever became of the tests. */
const running = new Set<ChildProcess>()
after(async () => {
  await Promise.all([...running].map((child) => stopProcess(child).catch(() => {})))
})

/**
 * `sluice start --role <role>` as a real child process on a free port; resolves once it serves HTTP
 * (`CHILD_START_MS` at most: a child that did not start is killed, never left running).
 */
export async function startRole(
  role: 'api' | 'worker' | 'all',
  env: Record<string, string>,
): Promise<SluiceChild> {
  const child = spawn(process.execPath, [CLI, 'start', '--role', role], {
    env: {
      ...process.env,
      PORT: '0',
      LOG_LEVEL: 'warn',
      // Two copies of the suite run up to four such files at once, each with up to four processes: at
      // the default of 10 (and a LISTEN connection each) they take more than PostgreSQL's 100.
      SLUICE_PG_POOL_SIZE: String(CHILD_POOL_SIZE),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  child.once('exit', () => running.delete(child))
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string)
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`sluice --role ${role} did not start within ${CHILD_START_MS} ms:\n${output}`)),
      CHILD_START_MS,
    )
    const check = () => {
      const match = /(?:listening on|health on) (http:\/\/[\d.]+:\d+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve(match[1]!)
      }
    }
    child.stdout!.on('data', check)
    void exited.then(() => {
      clearTimeout(timer)
      reject(new Error(`sluice --role ${role} exited before starting:\n${output}`))
    })
  }).catch(async (error: unknown) => {
    await stopProcess(child, 0)
    throw error
  })
  return { child, url, role, exited, output: () => output }
}

export async function runCli(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, [CLI, ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    timeout: CHILD_START_MS,
    killSignal: 'SIGKILL',
  })
  return stdout
}

/** SIGTERM, and SIGKILL if it has not exited within `CHILD_STOP_MS`. */
export async function stopChild(child: SluiceChild): Promise<void> {
  await stopProcess(child.child)
}

export interface CountingReceiver {
  url: string
  /** Requests per messageId. */
  seen: Map<string, number>
  total(): number
  close(): Promise<void>
}

/** A webhook receiver that counts deliveries per messageId and answers 200 after `delayMs`. */
export async function startCountingReceiver(delayMs = 0): Promise<CountingReceiver> {
  const seen = new Map<string, number>()
  let total = 0
  const sockets = new Set<Socket>()
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const { messageId } = JSON.parse(Buffer.concat(chunks).toString()) as { messageId: string }
      seen.set(messageId, (seen.get(messageId) ?? 0) + 1)
      total++
      if (delayMs > 0) setTimeout(() => response.end('ok'), delayMs)
      else response.end('ok')
    })
  })
  server.keepAliveTimeout = 60_000
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    seen,
    total: () => total,
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

export interface PrivateCluster {
  url: string
  /** `pg_ctl restart -m <mode>`: `immediate` is a crash (no checkpoint, WAL recovery on start). */
  restart(mode: 'fast' | 'immediate'): Promise<void>
  /** Stops the server (`pg_ctl stop -m fast`) and keeps its data, so `start` brings it back. */
  pause(): Promise<void>
  start(): Promise<void>
  /** Stops it for good and removes its files. */
  stop(): Promise<void>
}

/**
 * A throw-away PostgreSQL cluster (initdb in a temp dir, its own port and socket dir), built from the
 * same PostgreSQL installation as the shared test server. The restart test uses it so that restarting
 * PostgreSQL never breaks other tests (or other people's work) running against the shared server.
 * initdb refuses to run as root; as root it runs as the `postgres` user (util-linux's runuser, by its
 * full path: a root PATH without sbin must not break the test).
 */
export async function startPrivateCluster(): Promise<PrivateCluster> {
  const bindir = await postgresBindir()
  const dir = await mkdtemp(join(tmpdir(), 'sluice-pgcluster-'))
  const asRoot = process.getuid?.() === 0
  const wrap = async (command: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ['/usr/sbin/runuser', ['-u', 'postgres', '--', join(bindir, command), ...args]]
      : [join(bindir, command), args]
    try {
      return await run(file, argv, { cwd: dir, timeout: 60_000 })
    } catch (error) {
      const failure = error as Error & { stderr?: string }
      throw new Error(`${command} ${args.join(' ')} failed: ${failure.stderr ?? failure.message}`, {
        cause: error,
      })
    }
  }
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']).catch(() => {
      throw new Error('Running as root, the private PostgreSQL cluster needs a "postgres" user to run as.')
    })
    const { stdout: gid } = await run('id', ['-g', 'postgres'])
    await chown(dir, Number(stdout.trim()), Number(gid.trim()))
  }
  const data = join(dir, 'data')
  const port = await freePort()
  await wrap('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8'])
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=on -c synchronous_commit=on -c max_connections=60`
  await wrap('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', options, '-w', '-t', '60', 'start'])
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async restart(mode) {
      await wrap('pg_ctl', [
        '-D',
        data,
        '-l',
        join(dir, 'server.log'),
        '-m',
        mode,
        '-w',
        '-t',
        '60',
        'restart',
      ])
    },
    async pause() {
      await wrap('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop'])
    },
    async start() {
      await wrap('pg_ctl', [
        '-D',
        data,
        '-l',
        join(dir, 'server.log'),
        '-o',
        options,
        '-w',
        '-t',
        '60',
        'start',
      ])
    },
    async stop() {
      await wrap('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {})
      await rm(dir, { recursive: true, force: true })
    },
  }
}

async function postgresBindir(): Promise<string> {
  if (process.env.PG_BINDIR) return process.env.PG_BINDIR
  try {
    return (await run('pg_config', ['--bindir'])).stdout.trim()
  } catch {
    throw new Error(
      'The PostgreSQL restart test needs the PostgreSQL server binaries (initdb, pg_ctl): install PostgreSQL or set PG_BINDIR.',
    )
  }
}
