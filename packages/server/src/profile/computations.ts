/**
 * Which computed traits and audiences evaluate, what they read, and what a new or changed one queues
 * for evaluation. Shared by the steps the store runs (consume.ts, evaluation.ts, window-edges.ts,
 * audience-preview.ts).
 */
import { type Audience, type AudienceNode, eventLeaves } from '../domain/audiences.ts'
import type { ComputedTrait } from '../domain/computed-traits.ts'
import type { ComputationPatch } from '../store/core/profile-rules.ts'
import {
  type ComputationChange,
  type ComputationRow,
  type QueueScope,
  type TraitDefinition,
  toComputations,
} from '../store/tables/computations.ts'
import type { IdentityKind, IdentityRow, ProfileEventRow } from '../store/tables/profiles.ts'
import type { CallFacts } from './aggregate.ts'

/** Every computation, split by class. */
export interface Computations {
  traits: ComputedTrait[]
  audiences: Audience[]
  /**
   * Key → definition of the audiences an `audience` reference may name: every one, disabled and failed
   * included (a reference means "matches that definition"); default `audiences`'.
   */
  references?: Map<string, AudienceNode>
}

/** Disabled and failed computations are neither evaluated nor synced. */
export function isActive(row: Pick<ComputationRow, 'status'>): boolean {
  return row.status === 'computing' || row.status === 'live'
}

/** The computations that evaluate: every one neither disabled nor failed. */
export function activeComputations(rows: ComputationRow[]): Computations {
  return {
    ...toComputations(rows.filter(isActive)),
    references: audienceDefinitions(toComputations(rows).audiences),
  }
}

export function audienceDefinitions(audiences: Audience[]): Map<string, AudienceNode> {
  return new Map(audiences.map((audience) => [audience.key, audience.definition]))
}

/** What a batch of calls must queue a profile for: calls of these events, identify calls, merges. */
export function relevance(computations: Computations): { events: Set<string>; identifies: boolean } {
  const definitions = computations.references ?? audienceDefinitions(computations.audiences)
  const events = new Set(computations.traits.map((trait) => trait.event))
  for (const audience of computations.audiences) {
    for (const leaf of eventLeaves(audience.definition, definitions)) events.add(leaf.event)
  }
  // Audiences read traits (and trait values change with identify calls).
  return { events, identifies: computations.audiences.length > 0 }
}

/** The profiles a computation's backfill (and a destination added to it) must evaluate. */
export function queueScopeOf(row: Pick<ComputationRow, 'class' | 'definition'>): QueueScope {
  // An audience may hold for profiles that never made any event (a `not`, a trait): all of them.
  return row.class === 'computed_trait'
    ? { events: [(JSON.parse(row.definition) as TraitDefinition).event] }
    : 'all'
}

/**
 * The row change a patch makes, and the profiles to queue again. Disabling stops evaluation and
 * queues nothing. Enabling again, retrying a failed one (`enabled: true`) or a new definition computes
 * it over history again (status `computing`): the values that differ from what each destination was
 * last sent are sent, nothing else. A trait whose event changed queues the profiles of both events, so
 * the values of the old one's are recomputed (and cleared) too.
 */
export function patchComputation(
  row: ComputationRow,
  patch: ComputationPatch,
  now: number,
): { change: ComputationChange; scope: QueueScope } {
  const definition = patch.definition === undefined ? row.definition : JSON.stringify(patch.definition)
  const enabled = patch.enabled ?? row.status !== 'disabled'
  const recompute =
    definition !== row.definition || (patch.enabled === true && !isActive(row)) || row.status === 'disabled'
  const status = !enabled ? 'disabled' : recompute ? 'computing' : row.status
  const change: ComputationChange = {
    name: patch.name ?? row.name,
    destination_ids:
      patch.destinationIds === undefined ? row.destination_ids : JSON.stringify(patch.destinationIds),
    definition,
    status,
    error: status === 'failed' ? row.error : null,
    updated_at: now,
  }
  if (!isActive(change)) return { change, scope: 'none' }
  const [before, after] = [queueScopeOf(row), queueScopeOf({ class: row.class, definition })]
  const scope =
    before === 'all' || after === 'all' || before === 'none' || after === 'none'
      ? after
      : { events: [...new Set([...before.events, ...after.events])] }
  return { change, scope }
}

/** The id of a kind that speaks for a profile in sync messages: the most recently linked, or null. */
export function speakingId(identities: IdentityRow[], kind: IdentityKind): string | null {
  let best: IdentityRow | null = null
  for (const identity of identities) {
    if (identity.kind !== kind) continue
    if (
      best === null ||
      identity.linked_at > best.linked_at ||
      (identity.linked_at === best.linked_at && identity.value < best.value)
    ) {
      best = identity
    }
  }
  return best?.value ?? null
}

export function groupBy<T>(rows: T[], keyOf: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>()
  for (const row of rows) {
    const group = groups.get(keyOf(row))
    if (group) group.push(row)
    else groups.set(keyOf(row), [row])
  }
  return groups
}

/** A stored call as the computations read it. */
export function toCallFacts(row: ProfileEventRow): CallFacts {
  return {
    seq: row.message_pk,
    event: row.event,
    timestamp: row.occurred_at,
    properties: JSON.parse(row.properties) as Record<string, unknown>,
  }
}
