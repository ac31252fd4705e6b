/**
 * The value of a computed trait for one profile, from its calls of the trait's event. Pure and exact
 * (tested against a brute-force reference over random calls).
 *
 * - Calls are those of `event` that match every `where` condition and, with `withinDays`, whose
 *   timestamp is within that many days before `now`.
 * - `count`: how many (0 when none). `sum`: of the property's numeric values (0 when none).
 *   `avg`/`min`/`max`: of them, null when none.
 * - `first`/`last`: the property's value on the earliest/latest call that has it (by timestamp, then
 *   arrival). `most_frequent`: the value seen most often, at least twice; ties go to the first in sort
 *   order; null otherwise. `unique_list`: the distinct values, sorted; `unique_list_count`: how many.
 * - Sort order: numbers ascending, then strings by code unit, then booleans (false, true), then other
 *   values by their JSON text. Missing and null property values are skipped.
 */
import type { ComputedTraitKind, WhereCondition } from '../domain/computed-traits.ts'
import { matchesAll, valueAt } from './where.ts'

export interface TraitDefinition {
  kind: ComputedTraitKind
  event: string
  property: string | null
  where: readonly WhereCondition[]
  withinDays: number | null
}

/** One call as computations see it. */
export interface CallFacts {
  /** Arrival order (the message pk). */
  seq: number
  event: string | null
  timestamp: number
  properties: Record<string, unknown>
}

const DAY_MS = 86_400_000

export function computeTraitValue(
  definition: TraitDefinition,
  calls: readonly CallFacts[],
  now: number,
): unknown {
  const since =
    definition.withinDays === null ? Number.NEGATIVE_INFINITY : now - definition.withinDays * DAY_MS
  const matching = calls.filter(
    (call) =>
      call.event === definition.event &&
      call.timestamp > since &&
      matchesAll(call.properties, definition.where),
  )
  if (definition.kind === 'count') return matching.length
  const property = definition.property ?? ''
  const valued = matching
    .map((call) => ({ call, value: valueAt(call.properties, property) }))
    .filter(({ value }) => value !== undefined && value !== null)
  switch (definition.kind) {
    case 'sum':
    case 'avg':
    case 'min':
    case 'max':
      return numeric(
        definition.kind,
        valued
          .map(({ value }) => value)
          .filter((value): value is number => typeof value === 'number' && Number.isFinite(value)),
      )
    case 'first':
    case 'last': {
      if (valued.length === 0) return null
      const ordered = valued.toSorted(
        (a, b) => a.call.timestamp - b.call.timestamp || a.call.seq - b.call.seq,
      )
      return (definition.kind === 'first' ? ordered[0] : ordered.at(-1))!.value
    }
    case 'most_frequent':
      return mostFrequent(valued.map(({ value }) => value))
    case 'unique_list':
      return distinctSorted(valued.map(({ value }) => value))
    case 'unique_list_count':
      return distinctSorted(valued.map(({ value }) => value)).length
  }
}

function numeric(kind: 'sum' | 'avg' | 'min' | 'max', values: number[]): number | null {
  if (kind === 'sum') return values.reduce((total, value) => total + value, 0)
  if (values.length === 0) return null
  if (kind === 'avg') return values.reduce((total, value) => total + value, 0) / values.length
  return kind === 'min' ? Math.min(...values) : Math.max(...values)
}

function mostFrequent(values: unknown[]): unknown {
  const counts = new Map<string, { value: unknown; count: number }>()
  for (const value of values) {
    const key = JSON.stringify(value)
    const entry = counts.get(key)
    if (entry) entry.count++
    else counts.set(key, { value, count: 1 })
  }
  let best: { value: unknown; count: number } | null = null
  for (const entry of [...counts.values()].sort((a, b) => compareValues(a.value, b.value))) {
    if (entry.count >= 2 && (best === null || entry.count > best.count)) best = entry
  }
  return best === null ? null : best.value
}

function distinctSorted(values: unknown[]): unknown[] {
  const distinct = new Map<string, unknown>()
  for (const value of values) distinct.set(JSON.stringify(value), value)
  return [...distinct.values()].sort(compareValues)
}

const RANK: Record<string, number> = { number: 0, string: 1, boolean: 2 }

/** The documented sort order of values (see the header). */
export function compareValues(a: unknown, b: unknown): number {
  const [rankA, rankB] = [RANK[typeof a] ?? 3, RANK[typeof b] ?? 3]
  if (rankA !== rankB) return rankA - rankB
  if (rankA === 0) return (a as number) - (b as number)
  if (rankA === 2) return Number(a) - Number(b)
  const [textA, textB] = rankA === 1 ? [a as string, b as string] : [JSON.stringify(a), JSON.stringify(b)]
  return textA < textB ? -1 : textA > textB ? 1 : 0
}
