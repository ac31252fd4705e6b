/**
 * The profile worker's second step, run by the store (ProfileStore.evaluateComputations): turns queued
 * (dirty) profiles into current values, memberships and sync deliveries. Each step reads the queue
 * entries, the profiles' calls (through their folds, fold.ts), traits, values and what was last sent,
 * decides, and has the store commit all of it — values, last-sent state, the identify messages and
 * their deliveries, the queue entries' removal — in one transaction. A crash before the commit leaves
 * the queue entries to be evaluated again; after it, nothing is left to send twice.
 */
import { randomUUID } from 'node:crypto'
import { type Audience, type AudienceNode, eventLeaves } from '../domain/audiences.ts'
import type { ComputedTrait } from '../domain/computed-traits.ts'
import { setOwn } from '../lib/own-path.ts'
import { type Gate, gateOf, passGate } from '../route/gates.ts'
import type { ProfileSql } from '../store/core/profile-rules.ts'
import type { ComputationClass, EvaluationWrites, MarkedEventRow } from '../store/tables/computations.ts'
import type { AggregateScope, CallFacts } from './aggregate.ts'
import {
  type EventCondition,
  type EventNode,
  eventCondition,
  MembershipEvaluator,
  type ProfileFacts,
} from './audience-membership.ts'
import {
  activeComputations,
  audienceDefinitions,
  type Computations,
  groupBy,
  relevance,
  speakingId,
  toCallFacts,
} from './computations.ts'
import { traitScope } from './computed-value.ts'
import {
  addCalls,
  buildFold,
  type Fold,
  type FoldCache,
  foldedTraitValue,
  scopeKey,
  usableFor,
  worthKeeping,
} from './fold.ts'
import { applyIsolating, withoutComputations } from './isolated-apply.ts'

/** What an evaluation step reads and writes through, and the folds it keeps between steps. */
export type EvaluationContext = ProfileSql & {
  /** Folds kept between steps (fold.ts); none: every evaluation reads whole histories. */
  folds?: FoldCache
}

export interface EvaluationResult {
  /** Queue entries evaluated (0: none queued, or another process took them first). */
  evaluated: number
  deliveriesCreated: number
}

export async function evaluateQueued(
  context: EvaluationContext,
  limit: number,
  now: number,
): Promise<EvaluationResult> {
  const sql = context.computations
  const dirty = await sql.dirty(limit)
  const rows = await sql.list()
  if (dirty.length === 0) {
    const computing = rows.filter((row) => row.status === 'computing').map((row) => row.id)
    if (computing.length > 0) await sql.markLive(computing)
    return { evaluated: 0, deliveriesCreated: 0 }
  }
  const computations = activeComputations(rows)
  const profileIds = dirty.map((row) => row.profile_id)
  const definitions = computations.references ?? audienceDefinitions(computations.audiences)
  const events = [...relevance(computations).events]
  const scopes = aggregateScopes(computations, definitions)
  const traitKeys = new Map(computations.traits.map((trait) => [trait.id, scopeKey(traitScope(trait))]))
  const profileRows = await context.profiles.profiles(profileIds)
  const merges = new Map(profileRows.map((row) => [row.id, row.merged_in]))
  const folds = await currentFolds(context, profileIds, merges, events, scopes, now)
  const identitiesOf = groupBy(await context.profiles.identitiesOf(profileIds), (row) => row.profile_id)
  const traitsOf = new Map(profileRows.map((row) => [row.id, JSON.parse(row.traits)]))
  const values = new Map(
    (await sql.values(profileIds)).map((row) => [`${row.computation_id} ${row.profile_id}`, row.value]),
  )
  const sent = new Map(
    (await sql.sent(profileIds)).map((row) => [
      `${row.computation_id} ${row.destination_id} ${row.profile_id}`,
      row.value,
    ]),
  )
  // Each enabled destination with its subscription and filters: they judge the identify calls too.
  const enabled = new Map(
    (await context.destinations()).filter((d) => d.enabled).map((d) => [d.id, gateOf(d.settings)] as const),
  )
  const plan = new EvaluationPlan(dirty, now, values, sent, enabled)
  for (const profileId of profileIds) {
    const identities = identitiesOf.get(profileId) ?? []
    const traits = traitsOf.get(profileId) as Record<string, unknown> | undefined
    const fold = folds.get(profileId)!
    // A profile merged away or erased since it was queued has nothing left to compute.
    if (identities.length === 0 || traits === undefined) {
      context.folds?.delete([profileId])
      continue
    }
    const speaker = {
      userId: speakingId(identities, 'user'),
      anonymousId: speakingId(identities, 'anonymous'),
    }
    const computed: Record<string, unknown> = {}
    for (const trait of computations.traits) {
      plan.attempt(trait.id, () => {
        const value = foldedTraitValue(fold, trait, traitKeys.get(trait.id)!)
        // Computed traits are sent for identified users only.
        plan.decide({
          computation: trait,
          computationClass: 'computed_trait',
          profileId,
          value,
          speaker: speaker.userId === null ? null : speaker,
        })
        if (value !== null) setOwn(computed, trait.key, value)
      })
    }
    const memberships = new MembershipEvaluator(foldFacts(fold, traits, computed), now, definitions)
    for (const audience of computations.audiences) {
      plan.attempt(audience.id, () => {
        const member = memberships.memberOf(audience.key)
        const speaks = speaker.userId !== null || (audience.includeAnonymous && speaker.anonymousId !== null)
        plan.decide({
          computation: audience,
          computationClass: 'audience',
          profileId,
          value: member ? true : null,
          sentValue: member,
          speaker: speaks ? speaker : null,
        })
      })
    }
  }
  const writes = await applyIsolating(sql, plan.finish())
  if (writes === null) return { evaluated: 0, deliveriesCreated: 0 }
  return {
    evaluated: dirty.length,
    deliveriesCreated: writes.messages.reduce((total, message) => total + message.destination_ids.length, 0),
  }
}

function conditionScope(condition: EventCondition): AggregateScope {
  return { ...condition, property: null }
}

/** Every aggregate the active computations read, by scope key. */
function aggregateScopes(
  computations: Computations,
  definitions: ReadonlyMap<string, AudienceNode>,
): Map<string, AggregateScope> {
  const scopes = new Map<string, AggregateScope>()
  const add = (scope: AggregateScope) => scopes.set(scopeKey(scope), scope)
  for (const trait of computations.traits) add(traitScope(trait))
  for (const audience of computations.audiences) {
    for (const leaf of eventLeaves(audience.definition, definitions)) add(conditionScope(leaf))
  }
  return scopes
}

/**
 * Each queued profile's fold, current: a kept fold brought up to date with the calls it has not seen,
 * or one built from the profile's whole history (and kept, if worth it).
 */
async function currentFolds(
  context: EvaluationContext,
  profileIds: string[],
  merges: ReadonlyMap<string, number | undefined>,
  events: string[],
  scopes: Map<string, AggregateScope>,
  now: number,
): Promise<Map<string, Fold>> {
  const { computations: sql, folds: cache } = context
  const folds = new Map<string, Fold>()
  const marks: [string, number][] = []
  for (const id of profileIds) {
    const kept = cache?.get(id)
    if (kept !== undefined && kept.merges === merges.get(id) && usableFor(kept, scopes, now)) {
      folds.set(id, kept)
      marks.push([id, kept.mark])
    }
  }
  const unfolded = profileIds.filter((id) => !folds.has(id))
  const read = async (ask: () => Promise<MarkedEventRow[]> | MarkedEventRow[], count: number) =>
    count === 0 || events.length === 0 ? new Map<string, ConsumedCalls>() : callsByProfile(await ask())
  const newer = await read(() => sql.eventsAfter(marks, events), marks.length)
  for (const [id, fold] of folds) {
    const { calls, mark } = newer.get(id) ?? { calls: [], mark: 0 }
    addCalls(fold, scopes, calls, now)
    fold.mark = Math.max(fold.mark, mark)
  }
  const histories = await read(() => sql.eventsOf(unfolded, events), unfolded.length)
  for (const id of unfolded) {
    const { calls, mark } = histories.get(id) ?? { calls: [], mark: 0 }
    const fold = buildFold(scopes, calls, now, merges.get(id))
    fold.mark = mark
    folds.set(id, fold)
    if (cache && worthKeeping(fold, calls.length)) cache.set(id, fold)
    else cache?.delete([id])
  }
  return folds
}

/** A profile's calls in the order they were consumed, and the highest mark among them. */
interface ConsumedCalls {
  calls: CallFacts[]
  mark: number
}

/**
 * Rows → each profile's calls in the order they were consumed (mark, then pk), the order sums are
 * added in whether a fold is built at once or step by step.
 */
function callsByProfile(rows: MarkedEventRow[]): Map<string, ConsumedCalls> {
  const calls = new Map<string, ConsumedCalls>()
  for (const [id, group] of groupBy(rows, (row) => row.profile_id)) {
    // Usually in order already (SQLite reads them by its (profile, pk) index): sorting costs more.
    if (!inConsumedOrder(group)) group.sort(consumedOrder)
    calls.set(id, { calls: group.map(toCallFacts), mark: group.at(-1)!.mark })
  }
  return calls
}

/**
 * Each audience `event` node's scope key, by the node object: computed once per definition rather than
 * once per profile (a JSON text per condition per profile showed in audience creation over 100,000).
 */
const nodeScopeKeys = new WeakMap<EventNode, string>()

function nodeScopeKey(node: EventNode): string {
  let key = nodeScopeKeys.get(node)
  if (key === undefined) {
    key = scopeKey(conditionScope(eventCondition(node)))
    nodeScopeKeys.set(node, key)
  }
  return key
}

function consumedOrder(a: MarkedEventRow, b: MarkedEventRow): number {
  return a.mark - b.mark || a.message_pk - b.message_pk
}

function inConsumedOrder(rows: readonly MarkedEventRow[]): boolean {
  for (let i = 1; i < rows.length; i++) if (consumedOrder(rows[i - 1]!, rows[i]!) > 0) return false
  return true
}

/** Audience facts from a fold: an `event` condition's count is its aggregate's. */
function foldFacts(
  fold: Fold,
  traits: Record<string, unknown>,
  computed: Record<string, unknown>,
): ProfileFacts {
  return {
    count: (node) => {
      const aggregate = fold.aggregates.get(nodeScopeKey(node))
      if (aggregate === undefined) throw new Error(`no aggregate for the condition on "${node.event}"`)
      if (aggregate.error !== undefined) throw aggregate.error
      return aggregate.count
    },
    traits,
    computed,
  }
}

interface Decision {
  computation: ComputedTrait | Audience
  computationClass: ComputationClass
  profileId: string
  /** The stored value; null: none (for an audience: not a member). */
  value: unknown
  /** What a destination is told; default `value`. For an audience: true or false. */
  sentValue?: unknown
  /** Who the identify speaks for; null: nothing is sent for this profile. */
  speaker: { userId: string | null; anonymousId: string | null } | null
}

/**
 * Collects one evaluation step's writes: changed values, and an identify per destination that needs
 * one. A computation whose evaluation throws, for any profile, is marked failed: none of its writes of
 * this step are kept, and the others go on.
 */
class EvaluationPlan {
  readonly writes: EvaluationWrites
  private readonly failures = new Map<string, string>()
  private readonly values: Map<string, string>
  private readonly sent: Map<string, string>
  private readonly enabled: Map<string, Gate | null>

  constructor(
    done: EvaluationWrites['done'],
    now: number,
    values: Map<string, string>,
    sent: Map<string, string>,
    enabled: Map<string, Gate | null>,
  ) {
    this.writes = { done, setValues: [], clearValues: [], sent: [], messages: [], failed: [], gated: [], now }
    this.values = values
    this.sent = sent
    this.enabled = enabled
  }

  /**
   * Runs one computation's evaluation for one profile, unless it failed already in this step; when it
   * throws, the computation is marked failed (alone: the others go on).
   */
  attempt(computationId: string, evaluate: () => void): void {
    if (this.failures.has(computationId)) return
    try {
      evaluate()
    } catch (error) {
      this.failures.set(computationId, error instanceof Error ? error.message : String(error))
    }
  }

  /** The writes, without any of the failed computations' but their failure. */
  finish(): EvaluationWrites {
    let writes = this.writes
    for (const [id, error] of this.failures) writes = withoutComputations(writes, new Set([id]), error)
    return writes
  }

  decide({ computation, computationClass, profileId, value, sentValue = value, speaker }: Decision): void {
    const id = computation.id
    const valueText = value === null ? null : storedText(value)
    if (valueText !== (this.values.get(`${id} ${profileId}`) ?? null)) {
      if (valueText === null) this.writes.clearValues.push({ computation_id: id, profile_id: profileId })
      else this.writes.setValues.push({ computation_id: id, profile_id: profileId, value: valueText })
    }
    if (speaker === null) return
    const sentText = storedText(sentValue)
    // Nothing was sent yet: only a value (for an audience, membership) is worth a first identify.
    const first = value !== null
    const candidates = computation.destinationIds.filter((destinationId) => {
      const last = this.sent.get(`${id} ${destinationId} ${profileId}`)
      return this.enabled.has(destinationId) && (last === undefined ? first : last !== sentText)
    })
    if (candidates.length === 0) return
    const messageId = randomUUID()
    const at = new Date(this.writes.now).toISOString()
    const payload = {
      type: 'identify',
      userId: speaker.userId,
      ...(speaker.userId === null ? { anonymousId: speaker.anonymousId } : {}),
      traits: { [computation.key]: sentValue },
      context: {
        personas: {
          computation_class: computationClass,
          computation_id: id,
          computation_key: computation.key,
        },
        library: { name: 'sluice-personas', version: '1' },
      },
      messageId,
      timestamp: at,
      originalTimestamp: at,
      receivedAt: at,
      sentAt: at,
    }
    // A destination whose subscription or filters keep this call out does not get it, and nothing is
    // recorded as sent to it: a later change is judged again.
    const to = candidates.filter((destinationId) => {
      const gate = this.enabled.get(destinationId)
      const verdict = gate == null ? 'kept' : passGate(gate, payload).verdict
      if (verdict !== 'kept') {
        this.writes.gated.push({ computation_id: id, destination_id: destinationId, verdict })
      }
      return verdict === 'kept'
    })
    if (to.length === 0) return
    this.writes.messages.push({
      computation_id: id,
      message_id: messageId,
      user_id: speaker.userId,
      payload: JSON.stringify(payload),
      destination_ids: to,
    })
    for (const destinationId of to) {
      this.writes.sent.push({
        computation_id: id,
        destination_id: destinationId,
        profile_id: profileId,
        value: sentText,
      })
    }
  }
}

/**
 * A value as stored: its JSON text. A value that has none (a function, `undefined`) is refused here,
 * inside its computation's attempt, so that computation fails alone instead of the step's transaction.
 */
function storedText(value: unknown): string {
  const text: string | undefined = JSON.stringify(value)
  if (typeof text !== 'string') {
    throw new Error(`its value (${typeof value}) cannot be stored: only JSON values can`)
  }
  return text
}
