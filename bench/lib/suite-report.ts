// Renders the suite's results: a plain table for the terminal and bench/RESULTS.md (the table, then
// what bounds each scenario, copied from bench/NOTES.md).
import { type LabNotes, PROFILING_HEADING } from './lab-notes.ts'
import type { Figure } from './suite-scenarios.ts'

export interface SuiteScenarioResult {
  id: string
  title: string
  status: 'ok' | 'failed' | 'skipped'
  /** Why it failed or was skipped. */
  reason: string | null
  seconds: number
  loadAverage1m: { before: number; after: number } | null
  figures: Figure[]
  /** Data lost or duplicated, a crash, a timeout: what fails the suite. */
  problems: string[]
  /** The scenario script's own JSON result, whole. */
  result?: unknown
}

export interface SuiteResult {
  date: string
  quick: boolean
  only: string[] | null
  machine: { cpus: number; model: string; node: string; loadAverage1m: { before: number; after: number } }
  seconds: number
  summary: { pass: number; short: number; failedScenarios: string[]; skippedScenarios: string[] }
  scenarios: SuiteScenarioResult[]
}

function formatValue(value: number | null, unit: string): string {
  if (value === null) return '—'
  const digits = Math.abs(value) >= 100 || Number.isInteger(value) ? 0 : 1
  const text = value.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: 0 })
  return unit ? `${text} ${unit}` : text
}

function formatRatio(ratio: number | null): string {
  if (ratio === null) return '—'
  return ratio >= 10 ? `${ratio.toFixed(0)}×` : ratio >= 0.1 ? `${ratio.toFixed(2)}` : `${ratio.toFixed(3)}`
}

function verdict(figure: Figure): string {
  return figure.pass === null
    ? figure.goal === 'reported'
      ? 'reported'
      : '—'
    : figure.pass
      ? 'pass'
      : 'short'
}

function rows(suite: SuiteResult): string[][] {
  const out: string[][] = []
  for (const scenario of suite.scenarios) {
    if (scenario.status !== 'ok' && scenario.figures.length === 0) {
      out.push([scenario.title, scenario.status.toUpperCase(), scenario.reason ?? '', '', '', '', ''])
      continue
    }
    for (const figure of scenario.figures) {
      out.push([
        scenario.title,
        figure.figure,
        formatValue(figure.value, figure.unit),
        figure.baseline
          ? `${formatValue(figure.baseline.value, figure.baseline.unit)} (${figure.baseline.name})`
          : '—',
        formatRatio(figure.ratio),
        figure.goal,
        verdict(figure),
      ])
    }
    if (scenario.status === 'failed')
      out.push([scenario.title, 'FAILED', scenario.reason ?? '', '', '', '', ''])
  }
  return out
}

const HEADER = ['Scenario', 'Figure', 'Value', 'Baseline (same run)', 'Ratio', 'Goal', 'Result']

function machineLine(suite: SuiteResult): string {
  const m = suite.machine
  const between = suite.scenarios.flatMap((s) =>
    s.loadAverage1m ? [s.loadAverage1m.before, s.loadAverage1m.after] : [],
  )
  const peak = Math.max(m.loadAverage1m.before, m.loadAverage1m.after, ...between)
  return `${m.cpus} CPU cores (${m.model}), Node ${m.node}; load average (1 min) ${m.loadAverage1m.before} at the start, up to ${peak} between scenarios, ${m.loadAverage1m.after} at the end; ${suite.seconds} s${suite.quick ? '; quick (smoke) run: figures are not meaningful' : ''}`
}

export function renderTerminal(suite: SuiteResult): string {
  const table = [HEADER, ...rows(suite)]
  const widths = HEADER.map((_, i) => Math.min(60, Math.max(...table.map((row) => row[i]!.length))))
  const line = (row: string[]) =>
    row
      .map((cell, i) =>
        cell.length > widths[i]! ? `${cell.slice(0, widths[i]! - 1)}…` : cell.padEnd(widths[i]!),
      )
      .join(' │ ')
  return [
    `Sluice benchmark suite — ${machineLine(suite)}`,
    line(HEADER),
    widths.map((w) => '─'.repeat(w)).join('─┼─'),
    ...table.slice(1).map(line),
    '',
    `${suite.summary.pass} pass, ${suite.summary.short} short` +
      (suite.summary.skippedScenarios.length
        ? `, skipped: ${suite.summary.skippedScenarios.join(', ')}`
        : '') +
      (suite.summary.failedScenarios.length ? `, FAILED: ${suite.summary.failedScenarios.join(', ')}` : ''),
  ].join('\n')
}

/** A table laid out as the repository's formatter (Biome) lays out Markdown tables: padded, aligned. */
function markdownTable(header: string[], body: string[][], rightAligned: number[]): string[] {
  const length = (cell: string) => [...cell].length
  const widths = header.map((_, i) => Math.max(3, ...[header, ...body].map((row) => length(row[i] ?? ''))))
  const pad = (cell: string, i: number) => {
    const fill = ' '.repeat(widths[i]! - length(cell))
    return rightAligned.includes(i) ? fill + cell : cell + fill
  }
  const line = (row: string[]) => `| ${header.map((_, i) => pad(row[i] ?? '', i)).join(' | ')} |`
  const rule = `| ${widths.map((w, i) => (rightAligned.includes(i) ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w))).join(' | ')} |`
  return [line(header), rule, ...body.map(line)]
}

function resultsTable(suite: SuiteResult): string[] {
  const escapeCell = (cell: string) => cell.replaceAll('|', '\\|')
  return markdownTable(
    HEADER,
    rows(suite).map((row) => row.map(escapeCell)),
    [2, 3, 4],
  )
}

/** RESULTS.md: the table, then each scenario's note and how the profiles were taken (bench/NOTES.md). */
export function renderMarkdown(suite: SuiteResult, notes: LabNotes): string {
  const lines = [
    '# Benchmark results',
    '',
    `Generated by \`npm run bench\` (bench/run.ts) on ${suite.date.slice(0, 10)}: ${machineLine(suite)}.`,
    'Every party (Sluice, load generator, receivers, baseline servers) runs in its own process, and every',
    'ratio is against a baseline measured in the same run, because the machine is shared and noisy.',
    'A figure short of its goal is reported here, not failed; the plan for it is below.',
    '',
    ...resultsTable(suite),
    '',
    '## What bounds each figure',
    '',
  ]
  for (const scenario of suite.scenarios) {
    const load = scenario.loadAverage1m
    lines.push(
      `### ${scenario.title}`,
      '',
      `_${scenario.seconds} s${load ? `; load average ${load.before} → ${load.after}` : ''}._ ${notes.bounds.get(scenario.id) ?? ''}`,
      '',
    )
  }
  lines.push(`## ${PROFILING_HEADING}`, '', notes.profiling, '')
  return lines.join('\n')
}
