/**
 * Folds: per profile, the aggregates its computed traits and audience conditions need, built once
 * from its whole history and then kept current by adding only its newer calls. Without them every
 * evaluation reads and parses the profile's whole history, which for a heavy user (a server-side
 * userId, a bot: 100,000 calls) made each call cost as much as all the calls before it.
 *
 * A fold is a cache of what the calls say, not state of its own: losing it (a restart, eviction)
 * only means the next evaluation reads the history again. It is exact only while it has seen every
 * call of its profile up to its mark and nothing else, so it MUST be dropped whenever calls move
 * between profiles (a merge) or are deleted (erasure): a store's rules (store-rules.ts) drop their
 * folds when they merge or the store erases, and a fold records its profile's merge count, so a merge
 * by another process (PostgreSQL) is seen too. Calls are read by their mark (MarkedEventRow,
 * store/tables/computations.ts), so "calls after the mark" are exactly the calls not folded yet.
 */
import {
  type Aggregate,
  type AggregateScope,
  type CallFacts,
  emptyAggregate,
  foldCall,
  stillInWindow,
  traitValue,
} from './aggregate.ts'
import type { TraitDefinition } from './computed-value.ts'

export interface Fold {
  /** The highest mark among the calls folded (store/tables/computations.ts `MarkedEventRow`). */
  mark: number
  /** The profile's merge count when the fold was built (PostgreSQL; undefined on SQLite). */
  merges: number | undefined
  /** Every event name among the calls folded (a computed trait has no value until its event is seen). */
  seen: Set<string>
  /** Aggregate by scope key (`scopeKey`). */
  aggregates: Map<string, Aggregate>
}

/** A fold is kept only for profiles with at least this many relevant calls: smaller ones are cheap to read. */
export const FOLD_MIN_CALLS = 32

/** Folds kept in memory, the least recently used evicted first. */
const FOLD_CACHE_SIZE = 2_000

/** An aggregate with more distinct values than this is not kept (its fold would be large). */
const MAX_DISTINCT = 1_000

/** The key of an aggregate scope: equal scopes share one aggregate. */
export function scopeKey(scope: AggregateScope): string {
  return JSON.stringify([scope.event, scope.where, scope.withinDays, scope.property])
}

/** A fold of `calls` (in the order they were consumed) for `scopes`; the caller sets its mark. */
export function buildFold(
  scopes: ReadonlyMap<string, AggregateScope>,
  calls: readonly CallFacts[],
  now: number,
  merges?: number,
): Fold {
  const fold: Fold = { mark: 0, merges, seen: new Set(), aggregates: new Map() }
  for (const key of scopes.keys()) fold.aggregates.set(key, emptyAggregate())
  addCalls(fold, scopes, calls, now)
  return fold
}

/** Adds calls newer than the fold's mark, in the order they were consumed; the caller moves the mark. */
export function addCalls(
  fold: Fold,
  scopes: ReadonlyMap<string, AggregateScope>,
  calls: readonly CallFacts[],
  now: number,
): void {
  for (const call of calls) {
    if (call.event !== null) fold.seen.add(call.event)
    for (const [key, scope] of scopes) {
      const aggregate = fold.aggregates.get(key)!
      if (aggregate.error !== undefined) continue
      try {
        foldCall(aggregate, scope, call, now)
      } catch (error) {
        // A definition the store holds but cannot apply (written around the API's checks): its
        // computations fail when they read this aggregate; the others go on.
        aggregate.error = error
      }
    }
  }
}

/**
 * Whether `fold` can be brought up to date by adding newer calls: it has every scope needed, and no
 * call in a windowed aggregate has left its window since (then the window must be counted again).
 * Scopes no longer needed are dropped, so that a scope needed again later starts from the history.
 */
export function usableFor(fold: Fold, scopes: ReadonlyMap<string, AggregateScope>, now: number): boolean {
  for (const [key, scope] of scopes) {
    const aggregate = fold.aggregates.get(key)
    if (aggregate === undefined || !stillInWindow(aggregate, scope.withinDays, now)) return false
  }
  for (const key of [...fold.aggregates.keys()]) if (!scopes.has(key)) fold.aggregates.delete(key)
  return true
}

/**
 * A computed trait's value from a fold, the aggregate found by `key` (its `traitScope`'s). None at all
 * for a profile that never made the trait's event (rather than, say, a count of 0).
 */
export function foldedTraitValue(
  fold: Fold,
  trait: Pick<TraitDefinition, 'kind' | 'event'>,
  key: string,
): unknown {
  return fold.seen.has(trait.event) ? traitValue(trait.kind, fold.aggregates.get(key)!) : null
}

/** Whether a fold is worth keeping: not tiny, not huge. */
export function worthKeeping(fold: Fold, relevantCalls: number): boolean {
  if (relevantCalls < FOLD_MIN_CALLS) return false
  for (const aggregate of fold.aggregates.values()) {
    if (aggregate.error !== undefined || aggregate.distinct.size > MAX_DISTINCT) return false
  }
  return true
}

/** The folds of one store, by profile id (a Map keeps insertion order: the first key is the oldest use). */
export class FoldCache {
  private readonly folds = new Map<string, Fold>()
  private readonly capacity: number

  constructor(capacity = FOLD_CACHE_SIZE) {
    this.capacity = capacity
  }

  get(profileId: string): Fold | undefined {
    const fold = this.folds.get(profileId)
    if (fold !== undefined) {
      this.folds.delete(profileId)
      this.folds.set(profileId, fold)
    }
    return fold
  }

  set(profileId: string, fold: Fold): void {
    this.folds.delete(profileId)
    this.folds.set(profileId, fold)
    if (this.folds.size > this.capacity) this.folds.delete(this.folds.keys().next().value!)
  }

  delete(profileIds: Iterable<string>): void {
    for (const id of profileIds) this.folds.delete(id)
  }

  clear(): void {
    this.folds.clear()
  }

  get size(): number {
    return this.folds.size
  }
}
