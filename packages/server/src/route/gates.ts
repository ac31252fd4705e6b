/**
 * Which calls a destination gets, beyond its connections and the call's `integrations`: its
 * subscription, then its filters (route/filters.ts). Decided at routing time, inside the transaction
 * that stores the call, so a call the destination does not get costs no delivery row; the same
 * decision is taken again at delivery time only for the field rules' edits, and by the dry run.
 *
 * A destination with neither a subscription nor filters has no gate: routing for it is what it was.
 */
import type { WebhooksSettings } from '../domain/destinations.ts'
import { type CallPredicate, compileSubscription, parseSubscription } from '../lib/subscription-language.ts'
import { applyFilters, type CompiledFilter, compileFilter, type FilterVerdict } from './filters.ts'
import {
  JsonFacts,
  memberNeedle,
  type Prefilter,
  prefilterNames,
  prefilterOf,
  rawValuesKey,
} from './subscription-prefilter.ts'

/** A destination's subscription and filters, compiled. */
export interface Gate {
  subscription: CallPredicate | null
  /** Rules out, on the call's JSON text, calls the subscription cannot match (subscription-prefilter.ts). */
  prefilter: Prefilter | null
  /** The member names the prefilter reads. */
  prefilterNames: ReadonlySet<string>
  filters: CompiledFilter[]
  /** The field rules alone (`dropFields`, `allowFields`), in order: the edits a kept call gets. */
  edits: CompiledFilter[]
}

export type GateVerdict = 'filtered' | 'sampledOut'

/** The gate of a destination's settings; null when it has none (every call passes unchanged). */
export function compileGate(settings: Pick<WebhooksSettings, 'subscription' | 'filters'>): Gate | null {
  if (settings.subscription === undefined && (settings.filters ?? []).length === 0) return null
  const filters = (settings.filters ?? []).map((filter) => compileFilter(filter, compileSubscription))
  const parsed = settings.subscription === undefined ? null : parseSubscription(settings.subscription)
  const prefilter = parsed === null ? null : prefilterOf(parsed)
  return {
    subscription: settings.subscription === undefined ? null : compileSubscription(settings.subscription),
    prefilter,
    prefilterNames: parsed === null || prefilter === null ? new Set() : prefilterNames(parsed),
    filters,
    edits: filters.filter((filter) => filter.action === 'dropFields' || filter.action === 'allowFields'),
  }
}

/**
 * The call as a destination's field rules leave it, for delivery. Routing already decided that the
 * call goes (no `drop` or `sample` rule fired), so running the field rules alone, in order, gives the
 * same call as the whole chain did then.
 */
export function editedCall(
  settings: WebhooksSettings,
  call: Record<string, unknown>,
): Record<string, unknown> {
  const gate = gateOf(settings)
  if (gate === null || gate.edits.length === 0) return call
  const result = applyFilters(call, gate.edits)
  return result.verdict === 'kept' ? result.call : call
}

/** Runs the gate on a call: the subscription first (a miss is `filtered`), then the filters in order. */
export function passGate(gate: Gate, call: Record<string, unknown>): FilterVerdict {
  if (gate.subscription !== null && !gate.subscription(call)) return { verdict: 'filtered' }
  return applyFilters(call, gate.filters)
}

const bySettings = new WeakMap<object, Gate | null>()

/** The gate of a settings object, compiled once per object (the delivery engine keeps them). */
export function gateOf(settings: WebhooksSettings): Gate | null {
  let gate = bySettings.get(settings)
  if (gate === undefined) {
    gate = compileGate(settings)
    bySettings.set(settings, gate)
  }
  return gate
}

/** A routing target as the ingest transaction reads it: its settings as stored (JSON text). */
/** A destination row as routing reads it: its routing column (store/tables/destinations.ts, routingText). */
export interface RoutingRow {
  id: string
  updated_at: number | string
  routing: string | null
}

const byVersion = new Map<string, { version: string; gate: Gate | null }>()

/**
 * The gate of a destination row, compiled once per version of its settings (`updated_at`), so a
 * group commit pays for parsing only after a change.
 */
export function gateOfRow(row: RoutingRow): Gate | null {
  const version = String(row.updated_at)
  const cached = byVersion.get(row.id)
  if (cached !== undefined && cached.version === version) return cached.gate
  const gate =
    row.routing === null
      ? null
      : compileGate(JSON.parse(row.routing) as Pick<WebhooksSettings, 'subscription' | 'filters'>)
  byVersion.set(row.id, { version, gate })
  return gate
}

/**
 * One call as routing judges it against its destinations' gates, given as its stored JSON text: parsed
 * at most once, and only when some gate cannot rule the call out by its prefilter.
 */
export class GatedCall {
  readonly #json: string
  #facts: JsonFacts | undefined
  #call: Record<string, unknown> | undefined

  constructor(json: string) {
    this.#json = json
  }

  verdict(gate: Gate): 'kept' | GateVerdict {
    if (gate.prefilter !== null) {
      this.#facts ??= new JsonFacts(this.#json)
      if (!gate.prefilter(this.#facts)) return 'filtered'
    }
    return this.judged(gate)
  }

  /** The verdict of a gate whose prefilter (if any) already let the call through. */
  judged(gate: Gate): 'kept' | GateVerdict {
    this.#call ??= JSON.parse(this.#json) as Record<string, unknown>
    return passGate(gate, this.#call).verdict
  }
}

/**
 * The gated routing decisions for one call: each target it does NOT go to, with why. Targets that
 * `routeTo` (the call's `integrations`) excludes get no decision here.
 */
export function closedGates(
  targets: readonly { id: string; type: string; gate: Gate | null }[],
  routeTo: readonly string[],
  json: string,
): Map<string, GateVerdict> | null {
  const call = new GatedCall(json)
  let closed: Map<string, GateVerdict> | null = null
  for (const target of targets) {
    if (target.gate === null || !routeTo.includes(target.type)) continue
    const verdict = call.verdict(target.gate)
    if (verdict === 'kept') continue
    closed ??= new Map()
    closed.set(target.id, verdict)
  }
  return closed
}

/** A destination routing may send a call to, with its gate (null: it takes every call). */
export interface RoutingTarget {
  id: string
  type: string
  gate: Gate | null
}

/** What the prefilters decide for every call with the same `integrations` kinds and prefilter facts. */
interface Decision {
  /** Targets, in order, the call goes to without judging: those without a gate. */
  kept: number[]
  /** Targets, in order, whose gate must judge the call (prefilter passed, or none). */
  judged: number[]
  /** Targets a prefilter ruled out (`filtered`). */
  ruledOut: number[]
  /** Calls decided by this since the counts were last taken. */
  calls: number
}

/** Decisions remembered per router: calls usually share a few events; a flood of distinct ones is judged afresh. */
const MAX_DECISIONS = 1_000

/**
 * Routing of calls to one list of targets, as many calls as a group commit holds. What each target's
 * prefilter and `integrations` decide depends only on the call's `integrations` kinds and the string
 * values of the few members the prefilters read; so it is worked out once per distinct set of those
 * (read straight from the JSON text) and remembered, and a call costs one scan of its text per member
 * name and one lookup, however many destinations are connected. Only targets a prefilter lets through
 * (or that have none) judge the call itself, parsed at most once. Gives the same decisions as
 * `GatedCall.verdict` per target.
 */
export class Router {
  readonly targets: readonly RoutingTarget[]
  /** What precedes the values of the member names the prefilters read, in the JSON text. */
  readonly #needles: string[]
  /** By the call's `integrations` kinds, then by the values of the prefilters' member names. */
  readonly #decisions = new Map<string, Map<string, Decision>>()
  #remembered = 0
  /** Per target: calls its gate judged `filtered` or `sampledOut` since the counts were last taken. */
  readonly #filtered: number[]
  readonly #sampledOut: number[]
  /** The targets one call goes to: reused from call to call. */
  readonly #goesTo: number[] = []

  constructor(targets: readonly RoutingTarget[]) {
    this.targets = targets
    const names = new Set<string>()
    for (const target of targets) for (const name of target.gate?.prefilterNames ?? []) names.add(name)
    this.#needles = [...names].sort().map(memberNeedle)
    this.#filtered = targets.map(() => 0)
    this.#sampledOut = targets.map(() => 0)
  }

  /**
   * The indices in `targets`, in order, of those a call goes to; valid until the next call of `route`.
   * `json` is the call's stored JSON text (JSON.stringify output).
   */
  route(routeTo: readonly string[], json: string): readonly number[] {
    const kinds = routeTo.length === 1 ? routeTo[0]! : routeTo.join(',')
    let byFacts = this.#decisions.get(kinds)
    if (byFacts === undefined) {
      byFacts = new Map()
      this.#decisions.set(kinds, byFacts)
    }
    // Mostly one name (`event`, say) with one value: the key is then that value's text, unjoined.
    const needles = this.#needles
    let key = needles.length === 0 ? '' : rawValuesKey(json, needles[0]!)
    for (let n = 1; n < needles.length; n++) key = `${key}\u0003${rawValuesKey(json, needles[n]!)}`
    let decision = byFacts.get(key)
    if (decision === undefined) {
      decision = this.#decide(routeTo, json)
      if (this.#remembered < MAX_DECISIONS) {
        // A copy: the key is cut from the call's text, itself cut from a whole commit's worth of text
        // that a remembered slice would keep in memory.
        byFacts.set(JSON.parse(JSON.stringify(key)) as string, decision)
        this.#remembered++
      } else {
        decision.calls++
        this.#count(decision)
        return this.#judge(decision, json)
      }
    }
    decision.calls++
    return this.#judge(decision, json)
  }

  /** The targets the call goes to: a decision's `kept`, and those of its `judged` whose gate keeps it. */
  #judge(decision: Decision, json: string): readonly number[] {
    if (decision.judged.length === 0) return decision.kept
    const call = new GatedCall(json)
    const goesTo = this.#goesTo
    goesTo.length = 0
    for (let i = 0, k = 0, j = 0; i < this.targets.length; i++) {
      if (decision.kept[k] === i) {
        goesTo.push(i)
        k++
      } else if (decision.judged[j] === i) {
        j++
        const verdict = call.judged(this.targets[i]!.gate!)
        if (verdict === 'kept') goesTo.push(i)
        else if (verdict === 'filtered') this.#filtered[i]!++
        else this.#sampledOut[i]!++
      }
    }
    return goesTo
  }

  /** Forgets counts a commit that failed left behind: call before routing a commit's calls. */
  startCommit(): void {
    this.takeGatedCounts()
  }

  /** Each target's [filtered, sampledOut] since the last take (only those with some); then zeroed. */
  takeGatedCounts(): Map<string, [number, number]> {
    for (const byFacts of this.#decisions.values())
      for (const decision of byFacts.values()) this.#count(decision)
    const counts = new Map<string, [number, number]>()
    for (let i = 0; i < this.targets.length; i++) {
      const filtered = this.#filtered[i]!
      const sampledOut = this.#sampledOut[i]!
      if (filtered + sampledOut === 0) continue
      counts.set(this.targets[i]!.id, [filtered, sampledOut])
      this.#filtered[i] = 0
      this.#sampledOut[i] = 0
    }
    return counts
  }

  #count(decision: Decision): void {
    for (const i of decision.ruledOut) this.#filtered[i]! += decision.calls
    decision.calls = 0
  }

  #decide(routeTo: readonly string[], json: string): Decision {
    const decision: Decision = { kept: [], judged: [], ruledOut: [], calls: 0 }
    const facts = new JsonFacts(json)
    for (let i = 0; i < this.targets.length; i++) {
      const { type, gate } = this.targets[i]!
      if (!routeTo.includes(type)) continue
      if (gate === null) decision.kept.push(i)
      else if (gate.prefilter !== null && !gate.prefilter(facts)) decision.ruledOut.push(i)
      else decision.judged.push(i)
    }
    return decision
  }
}

const routers = new Map<string, Router>()

/**
 * The router of a list of routing rows (in the order given), kept while none of them changes (same
 * ids, kinds and settings versions), so its remembered decisions serve commit after commit.
 */
export function routerOf(rows: readonly (RoutingRow & { type: string })[]): Router {
  let key = ''
  for (const row of rows) key += `${row.id} ${row.type} ${row.updated_at}\n`
  let router = routers.get(key)
  if (router === undefined) {
    // Settings changed, or many sources with different connections: start afresh rather than grow.
    if (routers.size >= 100) routers.clear()
    router = new Router(rows.map((row) => ({ id: row.id, type: row.type, gate: gateOfRow(row) })))
    routers.set(key, router)
  }
  return router
}
