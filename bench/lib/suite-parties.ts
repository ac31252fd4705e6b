// The parties of the isolation and backlog scenarios, each in its own process: the receivers
// (suite-receivers.ts) and a Sluice (suite-sluice.ts), with small typed handles to drive them.
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { stripTypeScriptTypes } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import type { SuiteSluiceOptions, SuiteSluiceSeeded, SuiteSluiceStopped } from './suite-sluice.ts'

/**
 * suite-sluice.ts as plain JavaScript (its types stripped, written under .tmp/), so that its process
 * loads no TypeScript at all (it imports the built `@sluice/server`): the memory measured is what an
 * `npm start` process would use, not that plus Node's TypeScript loader.
 */
async function sluiceScript(): Promise<string> {
  const script = join(import.meta.dirname, '../../.tmp/bench-build/suite-sluice.mjs')
  const source = await readFile(join(import.meta.dirname, 'suite-sluice.ts'), 'utf8')
  await mkdir(dirname(script), { recursive: true })
  await writeFile(script, stripTypeScriptTypes(source))
  return script
}

/** A child Node process whose stdout is read as JSON lines. */
class JsonLineChild {
  readonly child: ChildProcess
  private readonly waiting: { accept: (line: unknown) => boolean; resolve: (line: unknown) => void }[] = []
  private readonly exited: Promise<never>

  constructor(args: string[]) {
    this.child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] })
    createInterface({ input: this.child.stdout! }).on('line', (text) => {
      let line: unknown
      try {
        line = JSON.parse(text)
      } catch {
        process.stdout.write(`${text}\n`) // not ours: pass it on
        return
      }
      const at = this.waiting.findIndex((w) => w.accept(line))
      if (at >= 0) this.waiting.splice(at, 1)[0]!.resolve(line)
      else process.stdout.write(`${text}\n`) // a log line, say: pass it on
    })
    this.exited = new Promise<never>((_, reject) =>
      this.child.once('exit', (code, signal) =>
        reject(new Error(`${args.join(' ').slice(0, 120)} exited (${code ?? signal})`)),
      ),
    )
    this.exited.catch(() => {})
  }

  /** The next stdout JSON line that `accept` takes; rejects if the process exits first. */
  next<T>(accept: (line: unknown) => boolean): Promise<T> {
    const line = new Promise<T>((resolve) =>
      this.waiting.push({ accept, resolve: resolve as (line: unknown) => void }),
    )
    return Promise.race([line, this.exited])
  }

  send(text: string): void {
    this.child.stdin!.write(`${text}\n`)
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    const exit = once(this.child, 'exit')
    this.child.kill('SIGTERM')
    await exit
  }
}

export interface ReceiverStats {
  listeners: { unique: number; duplicates: number }[]
  openHangingSockets: number
}

export interface WindowRate {
  count: number
  seconds: number
  perSecond: number
  total: number
  /** ms until the window's end (negative once it has passed); absent when nothing was received yet. */
  endsInMs?: number
}

export class Receivers {
  private readonly process: JsonLineChild
  readonly urls: string[]
  private readonly control: string

  private constructor(process: JsonLineChild, urls: string[], control: string) {
    this.process = process
    this.urls = urls
    this.control = control
  }

  /** `listeners` receivers, the last `hanging` of which accept connections and never answer. */
  /** The last `hanging` listeners never answer, or with `throttle` answer every other request 429. */
  static async start(listeners: number, hanging = 0, mode: 'hang' | 'throttle' = 'hang'): Promise<Receivers> {
    const child = new JsonLineChild([
      join(import.meta.dirname, 'suite-receivers.ts'),
      String(listeners),
      String(hanging),
      mode,
    ])
    const ready = await child.next<{ ports: number[]; control: number }>(
      (line) => 'ports' in (line as object),
    )
    return new Receivers(
      child,
      ready.ports.map((port) => `http://127.0.0.1:${port}/hook`),
      `http://127.0.0.1:${ready.control}`,
    )
  }

  async stats(): Promise<ReceiverStats> {
    return (await (await fetch(`${this.control}/stats`)).json()) as ReceiverStats
  }

  /**
   * Receipts per second over the union of `listeners`. The window starts `fromMs` after the first
   * receipt, or at the `skip`-th receipt; it lasts `spanMs`, or runs to the `upto`-th or the last receipt.
   */
  async window(
    listeners: number[],
    window: { fromMs?: number; skip?: number; upto?: number; spanMs?: number },
  ): Promise<WindowRate> {
    const query = new URLSearchParams({ listeners: listeners.join(',') })
    if (window.fromMs !== undefined) query.set('from', String(window.fromMs))
    if (window.skip !== undefined) query.set('skip', String(window.skip))
    if (window.upto !== undefined) query.set('upto', String(window.upto))
    if (window.spanMs !== undefined) query.set('span', String(window.spanMs))
    return (await (await fetch(`${this.control}/window?${query}`)).json()) as WindowRate
  }

  /**
   * Waits for a window with a span to pass, then measures it. Only the cheap /stats is polled on the
   * way (sorting every receipt for /window is left to the one call at the end), so the receivers take
   * as little CPU from the party being measured as they can.
   */
  async measureWindow(
    listeners: number[],
    window: { fromMs?: number; skip?: number; spanMs: number },
    timeoutMs: number,
  ): Promise<WindowRate> {
    const deadline = Date.now() + timeoutMs
    const received = async () => {
      const stats = await this.stats()
      return listeners.reduce((sum, i) => sum + stats.listeners[i]!.unique, 0)
    }
    await waitFor('the first receipts', async () => (await received()) > (window.skip ?? 0), timeoutMs)
    let wait = (window.fromMs ?? 0) + window.spanMs + 200
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, wait))
      const rate = await this.window(listeners, window)
      if ((rate.endsInMs ?? 1) < 0) return rate
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for the window`)
      wait = (rate.endsInMs ?? 100) + 100
    }
  }

  stop(): Promise<void> {
    return this.process.stop()
  }
}

export class SuiteSluice {
  private readonly process: JsonLineChild

  private constructor(process: JsonLineChild) {
    this.process = process
  }

  get pid(): number {
    return this.process.child.pid!
  }

  /** Stores a backlog in `dataDir` in a process of its own, which exits when done. */
  static async seed(options: Extract<SuiteSluiceOptions, { mode: 'seed' }>): Promise<SuiteSluiceSeeded> {
    const child = new JsonLineChild([await sluiceScript(), JSON.stringify(options)])
    try {
      return await child.next<SuiteSluiceSeeded>((line) => (line as { event?: string }).event === 'seeded')
    } finally {
      if (child.child.exitCode === null && child.child.signalCode === null) await once(child.child, 'exit')
    }
  }

  /** Starts a Sluice on a seeded `dataDir`; resolves once its delivery engine has started. */
  static async serve(
    options: Extract<SuiteSluiceOptions, { mode: 'serve' }>,
    nodeArgs: string[] = [],
  ): Promise<SuiteSluice> {
    const child = new JsonLineChild([...nodeArgs, await sluiceScript(), JSON.stringify(options)])
    try {
      await child.next((line) => (line as { event?: string }).event === 'started')
      return new SuiteSluice(child)
    } catch (error) {
      await child.stop()
      throw error
    }
  }

  /** Stops the engine (in-flight requests finish and are recorded) and reads the final counts. */
  async stop(): Promise<SuiteSluiceStopped> {
    const stopped = this.process.next<SuiteSluiceStopped>(
      (line) => (line as { event?: string }).event === 'stopped',
    )
    this.process.send('stop')
    return await stopped
  }

  kill(): Promise<void> {
    return this.process.stop()
  }
}

/** A fresh temporary data directory for `work`, removed afterwards. */
export async function withDataDir<T>(work: (dataDir: string) => Promise<T>): Promise<T> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-suite-'))
  try {
    return await work(dataDir)
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
}

/** Polls `check` every `everyMs` until it returns true; throws after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/**
 * Data checks against what the receivers saw, per healthy destination: nothing recorded as delivered
 * that its receiver never got (a loss), and no more duplicates than failed attempts could explain (a
 * request that timed out after the receiver got it is sent again: at-least-once, not a bug).
 * Returns the problems found, empty when the data is whole.
 */
export function dataProblems(stopped: SuiteSluiceStopped, stats: ReceiverStats, healthy: number[]): string[] {
  const problems: string[] = []
  for (const i of healthy) {
    const destination = stopped.destinations[i]!
    const received = stats.listeners[i]!
    if (destination.delivered > received.unique) {
      problems.push(
        `destination ${i}: ${destination.delivered} recorded as delivered, only ${received.unique} received (lost)`,
      )
    }
    if (received.duplicates > destination.failedAttempts) {
      problems.push(
        `destination ${i}: ${received.duplicates} duplicates received, only ${destination.failedAttempts} failed attempts to explain them`,
      )
    }
  }
  return problems
}
