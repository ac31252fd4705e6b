/**
 * Shared pieces of the reliability and security suite. Everything here talks to real components:
 * real Sluice servers (in-process or child processes), real HTTP receivers on 127.0.0.1.
 */
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { join } from 'node:path'
import { sleep } from '../deliver/receivers.ts'
import { type SluiceProcess, spawnSluice } from '../helpers/process.ts'

/** `npm run test:long` sets this: the same tests with bigger parameters (more kills, more inputs). */
export const LONG = process.env.SLUICE_LONG_TESTS === '1'

/**
 * Polls `read` until `done` holds; fails naming what it waited for and the last value seen. The default
 * limit is sized for a loaded 2-core machine (10 s ran out there): it only bounds a wait that returns as
 * soon as the condition holds.
 */
export async function until<T>(
  what: string,
  read: () => Promise<T> | T,
  done: (value: T) => boolean,
  timeoutMs = 60_000,
  intervalMs = 25,
): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > end) {
      const shown = JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? String(v) : v))
      assert.fail(`Timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${shown?.slice(0, 2000)}`)
    }
    await sleep(intervalMs)
  }
}

/**
 * Asserts an error answer is the documented JSON: `{"error": {"code", "message", "field"?}}` with a
 * non-empty code and message, served as application/json.
 */
export function assertJsonError(
  status: number,
  contentType: string | string[] | undefined,
  text: string,
  label: string,
): { code: string; message: string; field?: string } {
  assert.ok(status >= 400 && status <= 499, `${label}: expected a 4xx, got ${status}: ${text.slice(0, 500)}`)
  assert.match(String(contentType ?? ''), /^application\/json/, `${label}: content-type ${contentType}`)
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    assert.fail(`${label}: ${status} with a body that is not JSON: ${text.slice(0, 500)}`)
  }
  assert.ok(body !== null && typeof body === 'object' && !Array.isArray(body), `${label}: ${text}`)
  const error = body.error
  assert.ok(error !== null && typeof error === 'object', `${label}: no "error" object in ${text}`)
  assert.equal(typeof error.code, 'string', `${label}: error.code in ${text}`)
  assert.ok(error.code.length > 0, `${label}: empty error.code in ${text}`)
  assert.equal(typeof error.message, 'string', `${label}: error.message in ${text}`)
  assert.ok(error.message.trim().length > 0, `${label}: empty error.message in ${text}`)
  if (error.field !== undefined) assert.equal(typeof error.field, 'string', `${label}: error.field`)
  return error
}

/** Resident set size and its peak (high-water mark) of a process, from /proc, in bytes. */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN)
  return { rss: kb('VmRSS') * 1024, peak: kb('VmHWM') * 1024 }
}

export const MB = 1024 * 1024

/** Every receipt of every messageId, with the time it arrived (test-process clock). */
export class ReceiptLog {
  readonly receipts = new Map<string, number[]>()
  total = 0

  record(body: Buffer): string | undefined {
    let messageId: unknown
    try {
      messageId = (JSON.parse(body.toString('utf8')) as { messageId?: unknown }).messageId
    } catch {
      return undefined
    }
    if (typeof messageId !== 'string') return undefined
    const times = this.receipts.get(messageId)
    if (times) times.push(performance.now())
    else this.receipts.set(messageId, [performance.now()])
    this.total++
    return messageId
  }

  has(messageId: string): boolean {
    return this.receipts.has(messageId)
  }

  /** Receipts beyond the first, summed over messages. */
  duplicates(): number {
    let extra = 0
    for (const times of this.receipts.values()) extra += times.length - 1
    return extra
  }
}

/** A `respond` function for `startReceiver` that answers after `delayMs` with `status`. */
export function answerAfter(delayMs: () => number, status = 200) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    setTimeout(() => {
      if (!res.destroyed) res.writeHead(status).end(status === 200 ? 'ok' : `status ${status}`)
    }, delayMs())
  }
}

export interface Inspection {
  objectPrototype: string[]
  arrayPrototype: string[]
  functionPrototype: string[]
  memory: NodeJS.MemoryUsage
  gcExposed: boolean
}

export interface InstrumentedSluice extends SluiceProcess {
  /** Collects garbage in the child and reports its prototypes and memory (see inspect-probe.ts). */
  inspect(): Promise<Inspection>
}

/**
 * `sluice start` as a real child process (`spawnSluice`) with `--expose-gc` and the inspection probe
 * loaded, and an IPC channel to ask it.
 */
export async function spawnInstrumented(env: Record<string, string>): Promise<InstrumentedSluice> {
  const sluice = await spawnSluice(env, {
    nodeArgs: ['--expose-gc', '--import', join(import.meta.dirname, 'inspect-probe.ts')],
    ipc: true,
  })
  return {
    ...sluice,
    async inspect() {
      const answer = once(sluice.child, 'message', { signal: AbortSignal.timeout(10_000) }) as Promise<
        [Inspection]
      >
      sluice.child.send('inspect')
      const [inspection] = await answer
      return inspection
    },
  }
}
