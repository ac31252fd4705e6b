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
import { type AggregateScope, type CallFacts, emptyAggregate, foldCall, traitValue } from './aggregate.ts'

export type { CallFacts } from './aggregate.ts'

export interface TraitDefinition {
  kind: ComputedTraitKind
  event: string
  property: string | null
  where: readonly WhereCondition[]
  withinDays: number | null
}

/** The trait's value over `calls`, folded in the order given (arrival order, for exact sums). */
export function computeTraitValue(
  definition: TraitDefinition,
  calls: readonly CallFacts[],
  now: number,
): unknown {
  const aggregate = emptyAggregate()
  const scope = traitScope(definition)
  for (const call of calls) foldCall(aggregate, scope, call, now)
  return traitValue(definition.kind, aggregate)
}

/** The calls a computed trait aggregates, and the property it reads (none for a count). */
export function traitScope(definition: TraitDefinition): AggregateScope {
  return {
    event: definition.event,
    where: definition.where ?? [],
    withinDays: definition.withinDays ?? null,
    property: definition.kind === 'count' ? null : (definition.property ?? ''),
  }
}
