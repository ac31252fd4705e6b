/**
 * An aggregate: what the computed-trait kinds need to know about the calls of one event that match a
 * `where` and a window, kept so that calls can be added to it one at a time ("folded") instead of
 * recomputing from the whole history. `computeTraitValue` folds a profile's calls into a fresh
 * aggregate and reads the kind's value from it, so the incremental and the full computation are one
 * code path and agree exactly, provided calls are folded in arrival order (sums add up in that order).
 */
import type { ComputedTraitKind, WhereCondition } from '../domain/computed-traits.ts'
import { valueAtPath } from '../lib/own-path.ts'
import { matchesAll } from './where.ts'

/** One call as computations see it. */
export interface CallFacts {
  /** Arrival order (the message pk). */
  seq: number
  event: string | null
  timestamp: number
  properties: Record<string, unknown>
}

/** Which calls an aggregate counts (event, `where`, window) and the property it reads, if any. */
export interface AggregateScope {
  event: string
  where: readonly WhereCondition[]
  withinDays: number | null
  /** null: the calls are only counted. */
  property: string | null
}

/** A property value and the (timestamp, arrival) it was seen at. */
interface Seen {
  timestamp: number
  seq: number
  value: unknown
}

export interface Aggregate {
  /** Matching calls. */
  count: number
  /** Sum and number of the finite numeric property values, added in arrival order. */
  sum: number
  numbers: number
  min: number
  max: number
  /** The earliest and latest call with a property value, by timestamp then arrival. */
  first: Seen | null
  last: Seen | null
  /**
   * Distinct property values by JSON text: how often, and the first and last value with that text
   * (they differ only for 0 and -0, whose JSON texts are equal).
   */
  distinct: Map<string, { first: unknown; last: unknown; count: number }>
  /** The least timestamp among the matching calls: once it leaves the window, this aggregate is stale. */
  oldest: number
  /** What folding a call threw, if it did: reading the aggregate throws it again. */
  error?: unknown
}

const DAY_MS = 86_400_000

/** The calls of `scope` counted at `now` have a timestamp after this. */
export function windowStart(withinDays: number | null, now: number): number {
  return withinDays === null ? Number.NEGATIVE_INFINITY : now - withinDays * DAY_MS
}

export function emptyAggregate(): Aggregate {
  return {
    count: 0,
    sum: 0,
    numbers: 0,
    min: Number.NaN,
    max: Number.NaN,
    first: null,
    last: null,
    distinct: new Map(),
    oldest: Number.POSITIVE_INFINITY,
  }
}

/** Adds `call` to `aggregate` if it is one of `scope`'s calls at `now`. */
export function foldCall(aggregate: Aggregate, scope: AggregateScope, call: CallFacts, now: number): void {
  if (call.event !== scope.event || !(call.timestamp > windowStart(scope.withinDays, now))) return
  if (!matchesAll(call.properties, scope.where)) return
  aggregate.count++
  if (call.timestamp < aggregate.oldest) aggregate.oldest = call.timestamp
  if (scope.property === null) return
  const value = valueAtPath(call.properties, scope.property)
  if (value === undefined || value === null) return
  if (typeof value === 'number' && Number.isFinite(value)) {
    aggregate.sum += value
    aggregate.min = aggregate.numbers === 0 ? value : Math.min(aggregate.min, value)
    aggregate.max = aggregate.numbers === 0 ? value : Math.max(aggregate.max, value)
    aggregate.numbers++
  }
  const seen = { timestamp: call.timestamp, seq: call.seq, value }
  // Ties in (timestamp, seq) keep the first folded as `first` and the last folded as `last`.
  if (aggregate.first === null || before(seen, aggregate.first)) aggregate.first = seen
  if (aggregate.last === null || !before(seen, aggregate.last)) aggregate.last = seen
  const key = JSON.stringify(value)
  const entry = aggregate.distinct.get(key)
  if (entry) {
    entry.count++
    entry.last = value
  } else aggregate.distinct.set(key, { first: value, last: value, count: 1 })
}

function before(a: Seen, b: Seen): boolean {
  return a.timestamp < b.timestamp || (a.timestamp === b.timestamp && a.seq < b.seq)
}

/** Whether an aggregate folded earlier still holds at `now`: none of its calls has left the window. */
export function stillInWindow(aggregate: Aggregate, withinDays: number | null, now: number): boolean {
  return aggregate.oldest > windowStart(withinDays, now)
}

/** The value of a computed trait of `kind` over the aggregated calls (rules: computed-value.ts). */
export function traitValue(kind: ComputedTraitKind, aggregate: Aggregate): unknown {
  if (aggregate.error !== undefined) throw aggregate.error
  switch (kind) {
    case 'count':
      return aggregate.count
    case 'sum':
      return aggregate.sum
    case 'avg':
      return aggregate.numbers === 0 ? null : aggregate.sum / aggregate.numbers
    case 'min':
      return aggregate.numbers === 0 ? null : aggregate.min
    case 'max':
      return aggregate.numbers === 0 ? null : aggregate.max
    case 'first':
      return aggregate.first?.value ?? null
    case 'last':
      return aggregate.last?.value ?? null
    case 'most_frequent':
      return mostFrequent(aggregate)
    case 'unique_list':
      return distinctSorted(aggregate)
    case 'unique_list_count':
      return aggregate.distinct.size
  }
}

function mostFrequent(aggregate: Aggregate): unknown {
  let best: { value: unknown; count: number } | null = null
  const entries = [...aggregate.distinct.values()].map(({ first, count }) => ({ value: first, count }))
  for (const entry of entries.sort((a, b) => compareValues(a.value, b.value))) {
    if (entry.count >= 2 && (best === null || entry.count > best.count)) best = entry
  }
  return best === null ? null : best.value
}

function distinctSorted(aggregate: Aggregate): unknown[] {
  return [...aggregate.distinct.values()].map(({ last }) => last).sort(compareValues)
}

const RANK: Record<string, number> = { number: 0, string: 1, boolean: 2 }

/** The documented sort order of values (computed-value.ts). */
export function compareValues(a: unknown, b: unknown): number {
  const [rankA, rankB] = [RANK[typeof a] ?? 3, RANK[typeof b] ?? 3]
  if (rankA !== rankB) return rankA - rankB
  if (rankA === 0) return (a as number) - (b as number)
  if (rankA === 2) return Number(a) - Number(b)
  const [textA, textB] = rankA === 1 ? [a as string, b as string] : [JSON.stringify(a), JSON.stringify(b)]
  return textA < textB ? -1 : textA > textB ? 1 : 0
}
