// The parts of bench/NOTES.md that bench/RESULTS.md embeds: each scenario's "what bounds it" section
// and "How these were profiled". NOTES.md is the one place this prose lives; the suite only copies it.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

export const NOTES_FILE = join(import.meta.dirname, '..', 'NOTES.md')

/** The heading of the section RESULTS.md ends with. */
export const PROFILING_HEADING = 'How these were profiled'

export interface LabNotes {
  /** What bounds each scenario's figures, by scenario id (from a heading ending in "(`<id>`)"). */
  bounds: Map<string, string>
  /** How the profiles the notes rely on were taken. */
  profiling: string
}

/**
 * A section's Markdown as one line per paragraph (and per list item), paragraphs separated by a blank
 * line: NOTES.md wraps its lines for reading, RESULTS.md puts each note after its scenario's timing.
 */
function unwrap(lines: string[]): string {
  const blocks: string[][] = []
  let block: string[] | null = null
  for (const line of lines) {
    if (line.trim() === '') {
      block = null
      continue
    }
    if (!block) {
      block = []
      blocks.push(block)
    }
    // A list item starts a line of its own; its continuation lines are indented.
    if (line.startsWith('- ') || block.length === 0) block.push(line)
    else block[block.length - 1] += ` ${line.trim()}`
  }
  return blocks.map((paragraph) => paragraph.join('\n')).join('\n\n')
}

/** Reads the level-2 sections of NOTES.md. A scenario without a section gets no note. */
export async function readLabNotes(file = NOTES_FILE): Promise<LabNotes> {
  const sections = new Map<string, string[]>()
  let current: string[] | null = null
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    const heading = /^## (.+)$/.exec(line)
    if (heading) {
      current = []
      sections.set(heading[1]!.trim(), current)
    } else if (/^# /.test(line)) {
      current = null
    } else {
      current?.push(line)
    }
  }
  const bounds = new Map<string, string>()
  let profiling: string | null = null
  for (const [heading, lines] of sections) {
    const id = /\(`([\w-]+)`\)$/.exec(heading)?.[1]
    if (id) bounds.set(id, unwrap(lines))
    else if (heading === PROFILING_HEADING) profiling = unwrap(lines)
  }
  if (profiling === null) throw new Error(`${file} has no "## ${PROFILING_HEADING}" section`)
  return { bounds, profiling }
}
