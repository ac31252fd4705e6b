// CPU time of one process over a measurement, split by thread kind: Node's main thread, worker threads
// (Sluice's SQLite store), V8's helper threads (concurrent GC and compilation) and the rest (libuv's
// pool). Read from /proc/<pid>/task/*/stat, so Linux only; elsewhere the figures are null. Divided by
// the requests served, it says where a benchmark's CPU budget per request goes.
import { readdirSync, readFileSync } from 'node:fs'

export interface ThreadCpu {
  /** Milliseconds of CPU (user + system) over the measurement, all threads. */
  totalMs: number
  byKind: { main: number; workers: number; v8: number; other: number }
}

const TICK_MS = 10 // USER_HZ is 100 on Linux

function kindOf(name: string): keyof ThreadCpu['byKind'] {
  if (name === 'MainThread') return 'main'
  if (name === 'WorkerThread') return 'workers'
  if (name.startsWith('V8')) return 'v8'
  return 'other'
}

function sample(pid: number): Map<string, { kind: keyof ThreadCpu['byKind']; ticks: number }> | null {
  const threads = new Map<string, { kind: keyof ThreadCpu['byKind']; ticks: number }>()
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
        // utime and stime are fields 14 and 15 of the stat line; fields[] starts at field 3.
        threads.set(tid, { kind: kindOf(name), ticks: Number(fields[11]) + Number(fields[12]) })
      } catch {
        // the thread ended meanwhile
      }
    }
    return threads
  } catch {
    return null
  }
}

/** Starts measuring `pid`; the returned function stops and reports (null when /proc is not there). */
export function measureThreadCpu(pid: number): () => ThreadCpu | null {
  const start = sample(pid)
  return () => {
    const end = sample(pid)
    if (!start || !end) return null
    const byKind = { main: 0, workers: 0, v8: 0, other: 0 }
    for (const [tid, thread] of end)
      byKind[thread.kind] += (thread.ticks - (start.get(tid)?.ticks ?? 0)) * TICK_MS
    return { totalMs: byKind.main + byKind.workers + byKind.v8 + byKind.other, byKind }
  }
}
