/**
 * The profile worker's first step, run by the store (ProfileStore.consumeIntoProfiles): reads the next
 * committed messages past the profile cursor (profile-cursor.ts), resolves them into profiles
 * (identity-resolution.ts), marks the profiles whose computed traits or audiences they may change, and
 * has the store apply all of it in one transaction with the cursor — so a crash loses nothing and
 * nothing is consumed twice.
 */
import { COMPUTED_SOURCE_ID, type ComputationsSql } from '../store/tables/computations.ts'
import type { MessageRow } from '../store/tables/messages.ts'
import type { IdentityKind, ProfilesSql } from '../store/tables/profiles.ts'
import { activeComputations, relevance } from './computations.ts'
import { identitiesNamed, type LoadedProfiles, type PlannedBatch, planBatch } from './identity-resolution.ts'
import { advanceCursor, type Gap } from './profile-cursor.ts'

/**
 * Consumes up to `limit` committed messages not yet consumed. Returns how many were consumed (0 when
 * there were none, or another process consumed the same ones first: its transaction won the cursor).
 */
export async function consumeMessages(
  sql: ProfilesSql,
  computations: ComputationsSql,
  limit: number,
  now: number,
  /** Told the profiles of every merge applied (both sides), after the commit. */
  onMerged?: (profileIds: string[]) => void,
): Promise<number> {
  const cursor = await sql.cursor()
  const gaps = JSON.parse(cursor.gaps) as Gap[]
  const inGaps: MessageRow[] = []
  for (const [from, to] of gaps) inGaps.push(...(await sql.messages(from - 1, to, limit)))
  const fresh = await sql.messages(cursor.high_pk, null, limit)
  const next = advanceCursor(
    cursor.high_pk,
    gaps,
    inGaps.map((row) => row.pk).sort((a, b) => a - b),
    fresh.map((row) => row.pk),
    now,
  )
  const rows = [...inGaps, ...fresh]
  const gapsText = JSON.stringify(next.gaps)
  if (rows.length === 0 && gapsText === cursor.gaps) return 0
  // Sluice's own output is not a user's call: sync messages (identify calls carrying computed values),
  // and the `delete` notifications of a deletion request. A delete names the erased user: consumed,
  // it would add a call to their profile, or make them a new one after the erasure took the old.
  const messages = rows
    .filter((row) => row.source_id !== COMPUTED_SOURCE_ID && row.type !== 'delete')
    .map((row) => ({ row, payload: JSON.parse(row.payload) as Record<string, unknown> }))
  const planned = planBatch(
    messages,
    await loadFor(
      sql,
      messages.map((message) => message.payload),
    ),
  )
  const applied = await sql.apply({
    cursor: { highPk: next.highPk, gaps: gapsText, readVersion: cursor.version },
    ...planned,
    dirty: await affectedProfiles(computations, planned),
  })
  if (!applied) return 0
  if (planned.merges.length > 0) onMerged?.(planned.merges.flatMap((merge) => [merge.from_id, merge.into_id]))
  return rows.length
}

/** Profiles whose computed traits or audiences the batch may change: relevant calls, or a merge. */
async function affectedProfiles(computations: ComputationsSql, planned: PlannedBatch): Promise<string[]> {
  const rows = await computations.list()
  if (rows.length === 0) return []
  const { events, identifies } = relevance(activeComputations(rows))
  const affected = new Set(planned.merges.map((merge) => merge.into_id))
  for (const event of planned.events) {
    if ((event.event !== null && events.has(event.event)) || (identifies && event.type === 'identify')) {
      affected.add(event.profile_id)
    }
  }
  return [...affected]
}

async function loadFor(sql: ProfilesSql, payloads: Record<string, unknown>[]): Promise<LoadedProfiles> {
  const values: Record<IdentityKind, Set<string>> = { user: new Set(), anonymous: new Set() }
  for (const payload of payloads)
    for (const { kind, value } of identitiesNamed(payload)) values[kind].add(value)
  const identities = [
    ...(values.user.size > 0 ? await sql.identities('user', [...values.user]) : []),
    ...(values.anonymous.size > 0 ? await sql.identities('anonymous', [...values.anonymous]) : []),
  ]
  const profileIds = [...new Set(identities.map((row) => row.profile_id))]
  if (profileIds.length === 0) return { identities, identitiesOfProfiles: [], profiles: [] }
  return {
    identities,
    identitiesOfProfiles: await sql.identitiesOf(profileIds),
    profiles: await sql.profiles(profileIds),
  }
}
