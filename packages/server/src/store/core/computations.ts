/**
 * Computed traits in the store core: definitions ⇄ rows, and the evaluation step that turns queued
 * (dirty) profiles into current values and sync deliveries. Each step reads the queue entries, the
 * profiles' calls of the traits' events, their values and what was last sent, decides, and commits all
 * of it — values, last-sent state, the identify messages and their deliveries, the queue entries'
 * removal — in one transaction. A crash before the commit leaves the queue entries to be evaluated
 * again; after it, nothing is left to send twice.
 */
import { randomUUID } from 'node:crypto'
import type { ComputedTrait, ComputedTraitKind, WhereCondition } from '../../domain/computed-traits.ts'
import type { Destination } from '../../domain/destinations.ts'
import { type CallFacts, computeTraitValue } from '../../profile/computed-value.ts'
import {
  COMPUTED_SOURCE_ID,
  type ComputationsSql,
  type ComputedTraitRow,
  type EvaluationWrites,
  type SyncMessageRow,
} from './computation-sql.ts'
import type { IdentityRow, ProfileEventRow } from './profile-sql.ts'

export function toComputedTrait(row: ComputedTraitRow): ComputedTrait {
  return {
    id: row.id,
    name: row.name,
    key: row.key,
    kind: row.kind as ComputedTraitKind,
    event: row.event,
    property: row.property,
    where: JSON.parse(row.conditions) as WhereCondition[],
    withinDays: row.within_days,
    destinationIds: JSON.parse(row.destination_ids) as string[],
    status: row.status as ComputedTrait['status'],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

export function toComputedTraitRow(trait: ComputedTrait): ComputedTraitRow {
  return {
    id: trait.id,
    name: trait.name,
    key: trait.key,
    kind: trait.kind,
    event: trait.event,
    property: trait.property,
    conditions: JSON.stringify(trait.where),
    within_days: trait.withinDays,
    destination_ids: JSON.stringify(trait.destinationIds),
    status: trait.status,
    created_at: trait.createdAt,
    updated_at: trait.updatedAt,
  }
}

/** What an evaluation step needs besides the computation SQL. */
export interface EvaluationContext {
  sql: ComputationsSql
  identitiesOf(profileIds: string[]): Promise<IdentityRow[]> | IdentityRow[]
  destinations(): Promise<Destination[]>
}

export interface EvaluationResult {
  /** Queue entries evaluated (0: none queued, or another process took them first). */
  evaluated: number
  deliveriesCreated: number
}

/** The userId that speaks for a profile in sync messages: the most recently linked, or null. */
export function speakingUserId(identities: IdentityRow[]): string | null {
  let best: IdentityRow | null = null
  for (const identity of identities) {
    if (identity.kind !== 'user') continue
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

export async function evaluateQueued(
  context: EvaluationContext,
  limit: number,
  now: number,
): Promise<EvaluationResult> {
  const { sql } = context
  const dirty = await sql.dirty(limit)
  const traits = (await sql.listTraits()).map(toComputedTrait)
  if (dirty.length === 0) {
    const computing = traits.filter((trait) => trait.status === 'computing').map((trait) => trait.id)
    if (computing.length > 0) await sql.markLive(computing)
    return { evaluated: 0, deliveriesCreated: 0 }
  }
  const profileIds = dirty.map((row) => row.profile_id)
  const events =
    traits.length === 0 ? [] : await sql.eventsOf(profileIds, [...new Set(traits.map((t) => t.event))])
  const callsOf = groupBy(events, (row) => row.profile_id)
  const identitiesOf = groupBy(await context.identitiesOf(profileIds), (row) => row.profile_id)
  const values = new Map(
    (await sql.values(profileIds)).map((row) => [`${row.computation_id} ${row.profile_id}`, row.value]),
  )
  const sent = new Map(
    (await sql.sent(profileIds)).map((row) => [
      `${row.computation_id} ${row.destination_id} ${row.profile_id}`,
      row.value,
    ]),
  )
  const enabled = new Set((await context.destinations()).filter((d) => d.enabled).map((d) => d.id))
  const writes: EvaluationWrites = {
    done: dirty,
    setValues: [],
    clearValues: [],
    sent: [],
    messages: [],
    now,
  }
  for (const profileId of profileIds) {
    const identities = identitiesOf.get(profileId) ?? []
    // A profile merged away or erased since it was queued has nothing left to compute.
    if (identities.length === 0) continue
    const calls = (callsOf.get(profileId) ?? []).map(toCallFacts)
    const userId = speakingUserId(identities)
    for (const trait of traits) {
      // No value at all for a profile that never made the trait's event (rather than, say, a count of 0).
      const value = calls.some((call) => call.event === trait.event)
        ? computeTraitValue(trait, calls, now)
        : null
      const valueText = value === null ? null : JSON.stringify(value)
      const current = values.get(`${trait.id} ${profileId}`) ?? null
      if (valueText !== current) {
        if (valueText === null) writes.clearValues.push({ computation_id: trait.id, profile_id: profileId })
        else writes.setValues.push({ computation_id: trait.id, profile_id: profileId, value: valueText })
      }
      // Computed traits are sent for identified users only.
      if (userId === null) continue
      const sentText = valueText ?? 'null'
      const to = trait.destinationIds.filter((destinationId) => {
        const last = sent.get(`${trait.id} ${destinationId} ${profileId}`)
        return enabled.has(destinationId) && (last === undefined ? valueText !== null : last !== sentText)
      })
      if (to.length === 0) continue
      writes.messages.push(syncMessage(trait, userId, value, to, now))
      for (const destinationId of to) {
        writes.sent.push({
          computation_id: trait.id,
          destination_id: destinationId,
          profile_id: profileId,
          value: sentText,
        })
      }
    }
  }
  if (!(await sql.apply(writes))) return { evaluated: 0, deliveriesCreated: 0 }
  return {
    evaluated: dirty.length,
    deliveriesCreated: writes.messages.reduce((total, message) => total + message.destination_ids.length, 0),
  }
}

/** The identify a destination gets when a computed value changes (docs/profiles.md shows one). */
function syncMessage(
  trait: ComputedTrait,
  userId: string,
  value: unknown,
  destinationIds: string[],
  now: number,
): SyncMessageRow {
  const messageId = randomUUID()
  const at = new Date(now).toISOString()
  const payload = {
    type: 'identify',
    userId,
    traits: { [trait.key]: value },
    context: {
      personas: { computation_class: 'computed_trait', computation_id: trait.id, computation_key: trait.key },
      library: { name: 'sluice-computed-traits', version: '1' },
    },
    messageId,
    timestamp: at,
    originalTimestamp: at,
    receivedAt: at,
    sentAt: at,
  }
  return { message_id: messageId, payload: JSON.stringify(payload), destination_ids: destinationIds }
}

/**
 * Queues the profiles a time window's edge passed between `after` and `upTo`: their oldest calls may
 * have left a trait's window. Returns how many were queued.
 */
export async function queueWindowEdges(sql: ComputationsSql, after: number, upTo: number): Promise<number> {
  const DAY_MS = 86_400_000
  const queued = new Set<string>()
  for (const trait of (await sql.listTraits()).map(toComputedTrait)) {
    if (trait.withinDays === null) continue
    const window = trait.withinDays * DAY_MS
    for (const id of await sql.profilesWithEventsBetween(trait.event, after - window, upTo - window))
      queued.add(id)
  }
  if (queued.size > 0) await sql.markDirty([...queued])
  return queued.size
}

function toCallFacts(row: ProfileEventRow): CallFacts {
  return {
    seq: row.message_pk,
    event: row.event,
    timestamp: row.occurred_at,
    properties: JSON.parse(row.properties) as Record<string, unknown>,
  }
}

function groupBy<T>(rows: T[], keyOf: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>()
  for (const row of rows) {
    const group = groups.get(keyOf(row))
    if (group) group.push(row)
    else groups.set(keyOf(row), [row])
  }
  return groups
}

export { COMPUTED_SOURCE_ID }
