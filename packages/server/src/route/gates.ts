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
import { JsonFacts, type Prefilter, prefilterOf } from './subscription-prefilter.ts'

/** A destination's subscription and filters, compiled. */
export interface Gate {
  subscription: CallPredicate | null
  /** Rules out, on the call's JSON text, calls the subscription cannot match (subscription-prefilter.ts). */
  prefilter: Prefilter | null
  filters: CompiledFilter[]
  /** The field rules alone (`dropFields`, `allowFields`), in order: the edits a kept call gets. */
  edits: CompiledFilter[]
}

export type GateVerdict = 'filtered' | 'sampledOut'

/** The gate of a destination's settings; null when it has none (every call passes unchanged). */
export function compileGate(settings: Pick<WebhooksSettings, 'subscription' | 'filters'>): Gate | null {
  if (settings.subscription === undefined && (settings.filters ?? []).length === 0) return null
  const filters = (settings.filters ?? []).map((filter) => compileFilter(filter, compileSubscription))
  return {
    subscription: settings.subscription === undefined ? null : compileSubscription(settings.subscription),
    prefilter:
      settings.subscription === undefined ? null : prefilterOf(parseSubscription(settings.subscription)),
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
