// Summarizes V8 CPU profiles (node --cpu-prof) by self time: per thread, the busy share (time not
// idle), the modules and the functions that took it. `npm run bench -- --only <id> --profile` profiles
// every process of a scenario and prints this; on its own:
//   node bench/lib/suite-profile.ts <dir or .cpuprofile files...> [--top N]
import { readdir, readFile } from 'node:fs/promises'
import { basename, join } from 'node:path'

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
}
interface ProfileNode {
  id: number
  callFrame: CallFrame
}
interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

export interface ThreadSummary {
  file: string
  label: string
  /** Wall time covered, ms. */
  totalMs: number
  /** Time not idle, ms. */
  busyMs: number
  modules: { name: string; ms: number }[]
  functions: { name: string; module: string; ms: number }[]
}

/** Which module a frame belongs to: a package, a Sluice source file, a Node internal area, or V8. */
export function moduleOf(frame: CallFrame): string {
  const { url, functionName } = frame
  if (!url) {
    if (functionName.startsWith('(')) return functionName // (garbage collector), (program), (idle), (root)
    return '(native)'
  }
  if (url.startsWith('node:')) {
    const path = url.replace(/^node:(internal\/)?/, '').split('/')
    return `node:${path.slice(0, path[0] === 'deps' ? 2 : 1).join('/')}`
  }
  const packageMatch = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)
  if (packageMatch) return packageMatch[1]!
  const own = /\/(packages\/[^/]+\/src\/.*|bench\/.*)$/.exec(url)
  if (own) return own[1]!.replace(/^packages\/server\/src\//, 'server/').replace(/^packages\//, '')
  return url
}

/** Names a profile's thread by the entry script or worker it ran. */
function labelOf(modules: Set<string>, file: string): string {
  const known: [RegExp, string][] = [
    [/store\/sqlite\/store-worker\.ts$/, 'Sluice: SQLite store worker thread'],
    [/bench\/lib\/load-generator\.ts$/, 'load generator'],
    [/bench\/lib\/noop-server\.ts$/, 'no-op server'],
    [/bench\/lib\/raw-post\.ts$/, 'raw undici POSTs'],
    [/bench\/lib\/suite-receivers\.ts$/, 'receivers'],
    [/bench\/lib\/client-sink\.ts$/, 'client sink'],
    [/bench\/lib\/client-runner\.ts$/, 'client runner'],
    [/bench\/lib\/drain-backlog\.ts$/, 'Sluice: main thread (drain-backlog)'],
    [/bench\/lib\/suite-sluice\.ts$/, 'Sluice: main thread (suite-sluice)'],
    [/server\/cli\.ts$/, 'Sluice: main thread (cli start)'],
    [/bench\/(ingest|deliver|isolation|backlog|client|postgres|run)\.ts$/, 'bench driver'],
  ]
  for (const [pattern, label] of known) {
    if ([...modules].some((module) => pattern.test(module))) return label
  }
  return basename(file)
}

export function summarize(profile: CpuProfile, file: string, top = 12): ThreadSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfUs = new Map<number, number>()
  for (let i = 0; i < profile.samples.length; i++) {
    // A sample's time is the delta to the next one.
    const delta = profile.timeDeltas[i + 1] ?? 0
    selfUs.set(profile.samples[i]!, (selfUs.get(profile.samples[i]!) ?? 0) + Math.max(0, delta))
  }
  const modules = new Map<string, number>()
  const functions = new Map<string, { name: string; module: string; us: number }>()
  const allModules = new Set<string>()
  let idleUs = 0
  let totalUs = 0
  for (const node of profile.nodes) allModules.add(moduleOf(node.callFrame))
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame
    totalUs += us
    if (frame.functionName === '(idle)') {
      idleUs += us
      continue
    }
    const module = moduleOf(frame)
    modules.set(module, (modules.get(module) ?? 0) + us)
    const name = `${frame.functionName || '(anonymous)'}${frame.url ? `:${frame.lineNumber + 1}` : ''}`
    const key = `${module} ${name}`
    const entry = functions.get(key) ?? { name, module, us: 0 }
    entry.us += us
    functions.set(key, entry)
  }
  const ms = (us: number) => Math.round(us / 100) / 10
  return {
    file,
    label: labelOf(allModules, file),
    totalMs: ms(totalUs),
    busyMs: ms(totalUs - idleUs),
    modules: [...modules]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: ms(us) })),
    functions: [...functions.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, module: f.module, ms: ms(f.us) })),
  }
}

export function formatSummary(summary: ThreadSummary): string {
  const pct = (ms: number) => `${((100 * ms) / Math.max(1, summary.busyMs)).toFixed(1).padStart(5)}%`
  return [
    `## ${summary.label} — busy ${(summary.busyMs / 1000).toFixed(2)} s of ${(summary.totalMs / 1000).toFixed(2)} s (${basename(summary.file)})`,
    '  by module (share of busy time):',
    ...summary.modules.map((m) => `    ${pct(m.ms)}  ${m.name}`),
    '  by function:',
    ...summary.functions.map((f) => `    ${pct(f.ms)}  ${f.name}  [${f.module}]`),
  ].join('\n')
}

/** Summaries of every .cpuprofile among `paths` (files, or directories searched recursively). */
export async function summarizePaths(paths: string[], top = 12): Promise<ThreadSummary[]> {
  const files: string[] = []
  for (const path of paths) {
    if (path.endsWith('.cpuprofile')) files.push(path)
    else {
      for (const entry of await readdir(path, { recursive: true })) {
        if (entry.endsWith('.cpuprofile')) files.push(join(path, entry))
      }
    }
  }
  const summaries: ThreadSummary[] = []
  for (const file of files.sort()) {
    summaries.push(summarize(JSON.parse(await readFile(file, 'utf8')) as CpuProfile, file, top))
  }
  return summaries.sort((a, b) => b.busyMs - a.busyMs)
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const topAt = args.indexOf('--top')
  const top = topAt >= 0 ? Number(args[topAt + 1]) : 12
  const paths = args.filter((_, i) => topAt < 0 || (i !== topAt && i !== topAt + 1))
  for (const summary of await summarizePaths(paths, top)) console.log(`${formatSummary(summary)}\n`)
}
