// npm run bench [-- --quick] [-- --only ingest,backlog]
// The benchmark suite: runs every scenario of bench/lib/suite-scenarios.ts one after the other, each
// script as a child process of this one (and every party of a scenario in its own process below it),
// each with its baselines measured in the same run. Writes bench/results/latest.json and
// bench/RESULTS.md (full runs), or bench/results/latest.quick.json (--quick, the CI smoke run).
// A figure short of its goal is reported, not failed. The exit code is non-zero when a scenario
// crashed, timed out, wrote no result, or lost or duplicated data where it checks that.
// --only runs the named scenarios and writes nothing but their own result files.
// --render rewrites bench/RESULTS.md from bench/results/latest.json (after editing bench/NOTES.md or a
// scenario's goals: the figures are summarized again from the stored raw results).
// --profile runs every process of every scenario under `node --cpu-prof` (profiles in
// .tmp/bench-profiles/<scenario>/) and prints where each thread's CPU time went (bench/lib/suite-profile.ts);
// profiling slows everything down, so its figures are not the suite's.
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { readLabNotes } from './lib/lab-notes.ts'
import { machine } from './lib/processes.ts'
import { formatSummary, summarizePaths } from './lib/suite-profile.ts'
import {
  renderMarkdown,
  renderTerminal,
  type SuiteResult,
  type SuiteScenarioResult,
} from './lib/suite-report.ts'
import { SCENARIOS, type Scenario } from './lib/suite-scenarios.ts'

/**
 * bench/RESULTS.md, with the notes of bench/NOTES.md under the table. A run writes its results files
 * only (this and bench/results/), never a tracked doc such as the README or NOTES.md, so a benchmark
 * run leaves nothing else to commit or revert.
 */
async function writeReports(suite: SuiteResult): Promise<void> {
  const results = join(import.meta.dirname, 'RESULTS.md')
  await writeFile(results, renderMarkdown(suite, await readLabNotes()))
  console.log(`Wrote ${results}`)
}

const args = process.argv.slice(2)
if (args.includes('--render')) {
  const stored = JSON.parse(
    await readFile(join(import.meta.dirname, 'results', 'latest.json'), 'utf8'),
  ) as SuiteResult
  // The figures are summarized again from each scenario's stored raw result, so a changed goal or
  // figure text shows without running the benchmarks again; the measurements are the stored ones.
  const scenarios = stored.scenarios.map((stored) => {
    const scenario = SCENARIOS.find((candidate) => candidate.id === stored.id)
    return scenario && stored.result
      ? { ...stored, figures: scenario.summarize(stored.result).figures }
      : stored
  })
  const figures = scenarios.flatMap((r) => r.figures)
  const suite: SuiteResult = {
    ...stored,
    scenarios,
    summary: {
      ...stored.summary,
      pass: figures.filter((f) => f.pass === true).length,
      short: figures.filter((f) => f.pass === false).length,
    },
  }
  await writeReports(suite)
  console.log(renderTerminal(suite))
  process.exit(0)
}
const quick = args.includes('--quick')
const onlyAt = args.indexOf('--only')
const only = onlyAt >= 0 ? (args[onlyAt + 1] ?? '').split(',').filter(Boolean) : null
const unknown = only?.filter((id) => !SCENARIOS.some((scenario) => scenario.id === id)) ?? []
if (only && (only.length === 0 || unknown.length > 0)) {
  console.error(`--only takes a comma-separated list of: ${SCENARIOS.map((s) => s.id).join(', ')}`)
  process.exit(2)
}
const profile = args.includes('--profile')
const profilesDir = join(import.meta.dirname, '..', '.tmp', 'bench-profiles')
const scenarios = only ? SCENARIOS.filter((scenario) => only.includes(scenario.id)) : SCENARIOS
const resultsDir = join(import.meta.dirname, 'results')

let running: ChildProcess | undefined
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (running?.pid) killGroup(running.pid, 'SIGKILL')
    process.exit(130)
  })
}

/** Signals the scenario's whole process group (it and every party it started). */
function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal)
  } catch {
    // already gone
  }
}

/** Runs one scenario script in its own process group; resolves with how it ended. */
async function runScript(scenario: Scenario): Promise<{ code: number | null; timedOut: boolean }> {
  const scriptArgs = [
    join(import.meta.dirname, scenario.script),
    ...(quick ? ['--quick'] : []),
    ...(scenario.extraArgs?.(quick) ?? []),
  ]
  const env = profile
    ? {
        ...process.env,
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --cpu-prof --cpu-prof-dir=${join(profilesDir, scenario.id)}`,
      }
    : process.env
  const child = spawn(process.execPath, scriptArgs, { stdio: 'inherit', detached: true, env })
  running = child
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    console.error(`\n${scenario.id}: over its ${scenario.timeoutMs(quick) / 1000} s limit; stopping it`)
    killGroup(child.pid!, 'SIGTERM')
    setTimeout(() => killGroup(child.pid!, 'SIGKILL'), 5_000).unref()
  }, scenario.timeoutMs(quick))
  const [code] = (await once(child, 'exit')) as [number | null]
  clearTimeout(timer)
  killGroup(child.pid!, 'SIGKILL') // parties a crashed script left behind
  running = undefined
  return { code, timedOut }
}

async function runScenario(scenario: Scenario): Promise<SuiteScenarioResult> {
  if (profile) await rm(join(profilesDir, scenario.id), { recursive: true, force: true })
  const started = Date.now()
  const loadBefore = loadavg()[0]!
  const base = { id: scenario.id, title: scenario.title, figures: [], problems: [] }
  const seconds = () => Math.round((Date.now() - started) / 100) / 10
  const skipReason = (await scenario.precheck?.()) ?? null
  if (skipReason) {
    console.log(`\n== ${scenario.title}: skipped (${skipReason})`)
    return { ...base, status: 'skipped', reason: skipReason, seconds: seconds(), loadAverage1m: null }
  }
  console.log(`\n== ${scenario.title} (node bench/${scenario.script}${quick ? ' --quick' : ''})`)
  const { code, timedOut } = await runScript(scenario)
  const loadAverage1m = { before: round2(loadBefore), after: round2(loadavg()[0]!) }
  if (profile) {
    const summaries = await summarizePaths([join(profilesDir, scenario.id)], 10).catch(() => [])
    const text = summaries.map(formatSummary).join('\n\n')
    await writeFile(join(profilesDir, scenario.id, 'summary.txt'), `${text}\n`).catch(() => {})
    console.log(`\n-- CPU profiles of ${scenario.id} (${join(profilesDir, scenario.id)}):\n${text}`)
  }
  const file = join(resultsDir, `${scenario.result}${quick ? '.quick' : ''}.json`)
  let result: unknown = null
  try {
    // Only a file written by this run counts.
    if ((await stat(file)).mtimeMs >= started - 1_000) result = JSON.parse(await readFile(file, 'utf8'))
  } catch {
    result = null
  }
  const summary = result ? scenario.summarize(result) : { figures: [], problems: [] }
  const crash = timedOut
    ? `timed out after ${scenario.timeoutMs(quick) / 1000} s`
    : result === null
      ? `wrote no result (exit code ${code})`
      : code !== 0 && summary.problems.length === 0
        ? `exited with code ${code}`
        : null
  const problems = crash ? [crash, ...summary.problems] : summary.problems
  return {
    ...base,
    status: problems.length > 0 ? 'failed' : 'ok',
    reason: problems.length > 0 ? problems.join('; ') : null,
    seconds: seconds(),
    loadAverage1m,
    figures: summary.figures,
    problems,
    result,
  }
}

const round2 = (value: number) => Math.round(value * 100) / 100
const started = Date.now()
const loadBefore = loadavg()[0]!
const results: SuiteScenarioResult[] = []
for (const scenario of scenarios) results.push(await runScenario(scenario))

const suite: SuiteResult = {
  date: new Date(started).toISOString(),
  quick,
  only,
  machine: { ...machine(), loadAverage1m: { before: round2(loadBefore), after: round2(loadavg()[0]!) } },
  seconds: Math.round((Date.now() - started) / 1000),
  summary: {
    pass: results.flatMap((r) => r.figures).filter((f) => f.pass === true).length,
    short: results.flatMap((r) => r.figures).filter((f) => f.pass === false).length,
    failedScenarios: results.filter((r) => r.status === 'failed').map((r) => r.id),
    skippedScenarios: results.filter((r) => r.status === 'skipped').map((r) => r.id),
  },
  scenarios: results,
}

console.log(`\n${renderTerminal(suite)}`)
if (!only && !profile) {
  await mkdir(resultsDir, { recursive: true })
  const file = join(resultsDir, quick ? 'latest.quick.json' : 'latest.json')
  await writeFile(file, `${JSON.stringify(suite, null, 2)}\n`)
  console.log(`Wrote ${file}`)
  if (!quick) await writeReports(suite)
}
if (suite.summary.failedScenarios.length > 0) {
  console.error(`Failed: ${suite.summary.failedScenarios.join(', ')}`)
  process.exitCode = 1
}
