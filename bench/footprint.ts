// npm run bench -- --only footprint [--quick]
// The embedded default's start-up and footprint: a fresh data directory, `sluice start` (what
// `npm start` runs once it has built the server) to the first `GET /readyz` answered 200, then the
// resident memory of the idle process. Three rounds; the median and the spread are reported.
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { machine, SLUICE_CLI, stop } from './lib/processes.ts'

const quick = process.argv.includes('--quick')
const rounds = 3
/** How long the process sits idle before its resident memory is read. */
const idleMs = quick ? 2_000 : 10_000

/** Resident memory of `pid` in MB, from /proc (Linux). */
async function residentMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1])
  return Math.round(kb / 102.4) / 10
}

async function round(): Promise<{ startupMs: number; idleRssMb: number }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'sluice-bench-footprint-'))
  const started = performance.now()
  const child = spawn(process.execPath, [SLUICE_CLI, 'start'], {
    env: { ...process.env, SLUICE_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  try {
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    // Polled every 5 ms from the spawn: the port is known once the server prints where it listens.
    let startupMs = Number.NaN
    while (Number.isNaN(startupMs)) {
      if (child.exitCode !== null) throw new Error(`sluice start exited (${child.exitCode}):\n${output}`)
      if (performance.now() - started > 30_000) throw new Error(`not ready after 30 s:\n${output}`)
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1]
      if (url) {
        const ready = await fetch(`${url}/readyz`).then(
          (response) => response.status === 200,
          () => false,
        )
        if (ready) startupMs = performance.now() - started
      }
      if (Number.isNaN(startupMs)) await sleep(5)
    }
    await sleep(idleMs)
    return { startupMs: Math.round(startupMs), idleRssMb: await residentMb(child.pid!) }
  } finally {
    await stop(child)
    await rm(dataDir, { recursive: true, force: true })
  }
}

const measured: { startupMs: number; idleRssMb: number }[] = []
for (let i = 0; i < rounds; i++) measured.push(await round())
/** Median and spread of one figure over the rounds. */
function spread(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b)
  return {
    median: sorted[Math.floor(sorted.length / 2)]!,
    min: sorted[0]!,
    max: sorted.at(-1)!,
    rounds: sorted.length,
  }
}
const result = {
  scenario: 'footprint',
  quick,
  machine: machine(),
  idleMs,
  rounds: measured,
  startupMs: spread(measured.map((m) => m.startupMs)),
  idleRssMb: spread(measured.map((m) => m.idleRssMb)),
  goals: { startupMs: 1_500, idleRssMb: 120 },
}
/** What bench/results/footprint.json holds (bench/lib/suite-scenarios.ts reads it). */
export type FootprintResult = typeof result

console.log(
  [
    `Footprint (${result.machine.cpus} CPU cores, Node ${result.machine.node}${quick ? ', quick' : ''})`,
    `Start-up to /readyz 200, fresh data dir: ${result.startupMs.median} ms (${rounds} rounds, ${result.startupMs.min}–${result.startupMs.max})`,
    `Idle RSS after ${idleMs / 1000} s: ${result.idleRssMb.median} MB (${result.idleRssMb.min}–${result.idleRssMb.max})`,
  ].join('\n'),
)
await mkdir(join(import.meta.dirname, 'results'), { recursive: true })
await writeFile(
  join(import.meta.dirname, 'results', quick ? 'footprint.quick.json' : 'footprint.json'),
  `${JSON.stringify(result, null, 2)}\n`,
)
