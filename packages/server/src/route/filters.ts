/**
 * A destination's filters, in Segment's destination-filter vocabulary: up to 10 rules applied in order
 * after the subscription, each to the calls its `if` matches (every call without one).
 * - `drop`: the call is not delivered (counted as filtered).
 * - `sample`: `percent`% of the calls are kept, decided by the messageId alone, so the same call always
 *   gets the same decision — on a retry, a replay, a dry run or in another process.
 * - `dropFields`: the listed paths are removed. `allowFields`: only they are kept, with `type`,
 *   `messageId` and `timestamp`.
 * Later rules see the call as the earlier ones left it. Paths name object members with dots
 * (`properties.email`, `context.ip`).
 */
import type { DestinationFilter, FilterAction } from '../domain/destinations.ts'
import { isJsonObject } from '../lib/json-object.ts'
import type { CallPredicate } from '../lib/subscription-language.ts'

/** A rule ready to run: its `if` compiled, its paths split. */
export interface CompiledFilter {
  matches: CallPredicate | null
  action: FilterAction
  percent: number
  paths: string[][]
}

/** What the filters decided for one call; `call` is the call as the field rules left it. */
export type FilterVerdict =
  | { verdict: 'kept'; call: Record<string, unknown> }
  | { verdict: 'filtered' | 'sampledOut' }

/** Members `allowFields` always keeps. */
const ALWAYS_KEPT = ['type', 'messageId', 'timestamp'] as const

export function compileFilter(
  filter: DestinationFilter,
  compile: (text: string) => CallPredicate,
): CompiledFilter {
  return {
    matches: filter.if === undefined ? null : compile(filter.if),
    action: filter.action,
    percent: filter.percent ?? 100,
    paths: (filter.fields ?? []).map((path) => path.split('.')),
  }
}

/** Runs the rules in order. The input call is never modified (edits copy what they change). */
export function applyFilters(
  call: Record<string, unknown>,
  filters: readonly CompiledFilter[],
): FilterVerdict {
  let current = call
  for (const filter of filters) {
    if (filter.matches !== null && !filter.matches(current)) continue
    switch (filter.action) {
      case 'drop':
        return { verdict: 'filtered' }
      case 'sample':
        if (!sampledIn(current.messageId, filter.percent)) return { verdict: 'sampledOut' }
        break
      case 'dropFields':
        for (const path of filter.paths) current = withoutPath(current, path)
        break
      case 'allowFields':
        current = onlyPaths(current, filter.paths)
        break
    }
  }
  return { verdict: 'kept', call: current }
}

/**
 * Whether a call is among the `percent`% kept: FNV-1a of the messageId, in 10,000 buckets, so any
 * percentage to two decimals is honoured and the decision never depends on anything but the id.
 */
export function sampledIn(messageId: unknown, percent: number): boolean {
  if (percent >= 100) return true
  if (percent <= 0) return false
  const text = String(messageId ?? '')
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0) % 10_000 < percent * 100
}

/** A copy of `object` without the member at `path`; `object` itself when there is none. */
function withoutPath(object: Record<string, unknown>, path: readonly string[]): Record<string, unknown> {
  const [head, ...rest] = path
  if (head === undefined || !Object.hasOwn(object, head)) return object
  if (rest.length === 0) {
    const { [head]: _removed, ...kept } = object
    return kept
  }
  const child = object[head]
  if (!isJsonObject(child)) return object
  const edited = withoutPath(child, rest)
  return edited === child ? object : { ...object, [head]: edited }
}

/** A new object holding only the members at `paths` (and the ones always kept). */
function onlyPaths(object: Record<string, unknown>, paths: readonly string[][]): Record<string, unknown> {
  const result: Record<string, unknown> = {}
  for (const name of ALWAYS_KEPT) if (Object.hasOwn(object, name)) result[name] = object[name]
  for (const path of paths) {
    let source: unknown = object
    for (const segment of path) source = isJsonObject(source) ? source[segment] : undefined
    if (source === undefined) continue
    let target = result
    for (const segment of path.slice(0, -1)) {
      // A copy: the object may be one taken whole from the call by an earlier path.
      const next = target[segment]
      const copy: Record<string, unknown> = isJsonObject(next) ? { ...next } : {}
      target[segment] = copy
      target = copy
    }
    target[path.at(-1)!] = source
  }
  return result
}
