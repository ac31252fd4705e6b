// Where the CPU went during a measurement: machine-wide busy share (from /proc/stat) and the share used
// by PostgreSQL's processes, by Sluice's processes and by everything else. Linux only; elsewhere the
// figures are null. On a two-core machine this is what explains a scaling ratio.
import { readdirSync, readFileSync } from 'node:fs'

interface Sample {
  total: number
  idle: number
  byGroup: Map<string, number>
}

/** Ticks used by the processes of each group: a pid list, or a command-line pattern. */
function processTicks(groups: Record<string, RegExp | number[]>): Map<string, number> {
  const ticks = new Map<string, number>(Object.keys(groups).map((name) => [name, 0]))
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      let group: string | undefined
      for (const [name, match] of Object.entries(groups)) {
        if (Array.isArray(match) ? match.includes(Number(pid)) : match.test(readCmdline(pid))) group = name
      }
      if (!group) continue
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      // utime and stime are fields 14 and 15 of /proc/<pid>/stat; fields[] starts at field 3.
      ticks.set(group, ticks.get(group)! + Number(fields[11]) + Number(fields[12]))
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks
}

function readCmdline(pid: string): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\u0000', ' ')
}

function sample(groups: Record<string, RegExp | number[]>): Sample | null {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
    const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0)
    return { total: cpu.reduce((a, b) => a + b, 0), idle, byGroup: processTicks(groups) }
  } catch {
    return null
  }
}

export interface CpuReport {
  /** Share of all cores busy during the measurement (0..1). */
  busy: number | null
  /** Share of all cores used by each group (0..1). */
  groups: Record<string, number>
}

/** Every PostgreSQL process on the machine (the postmaster and all backends). */
const POSTGRES = /^postgres:|\/bin\/postgres /

/**
 * Starts measuring; the returned function stops and reports. `sluicePids`: the Sluice processes under
 * test (still alive when the report is taken). The rest of the busy time — load generators that have
 * exited, the receiver, the benchmark itself, anything else on the machine — is `other`.
 */
export function measureCpu(sluicePids: number[] = []): () => CpuReport {
  const groups = { postgres: POSTGRES, sluice: sluicePids }
  const start = sample(groups)
  return () => {
    const end = sample(groups)
    if (!start || !end || end.total === start.total) return { busy: null, groups: {} }
    const elapsed = end.total - start.total
    const result: Record<string, number> = {}
    for (const [name, ticks] of end.byGroup) {
      result[name] = Number(Math.max(0, (ticks - (start.byGroup.get(name) ?? 0)) / elapsed).toFixed(3))
    }
    const busy = 1 - (end.idle - start.idle) / elapsed
    const attributed = Object.values(result).reduce((a, b) => a + b, 0)
    result.other = Number(Math.max(0, busy - attributed).toFixed(3))
    return { busy: Number(busy.toFixed(3)), groups: result }
  }
}
