/**
 * The profile side of the store core: the profile worker's step (consume the next committed messages
 * into profiles, with the cursor, in one transaction), and profile reads and erasure. SQL is the
 * backend's (profile-sql.ts); resolution rules are profile-batch.ts's.
 */
import type { Profile, ProfileEvent, ProfileIdentity } from '../../domain/profiles.ts'
import { COMPUTED_SOURCE_ID, type ComputationsSql } from './computation-sql.ts'
import { activeComputations, relevance } from './computations.ts'
import { identitiesNamed, type LoadedProfiles, type PlannedBatch, planBatch } from './profile-batch.ts'
import { advanceCursor, type Gap } from './profile-cursor.ts'
import type { IdentityKind, IdentityRow, ProfileEventRow, ProfilesSql } from './profile-sql.ts'
import type { MessageRow } from './rows.ts'

/** Messages consumed per transaction when the caller does not say. */
export const DEFAULT_PROFILE_BATCH = 500

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
  // Sync messages (identify calls carrying computed values) are Sluice's own output, not a user's call.
  const messages = rows
    .filter((row) => row.source_id !== COMPUTED_SOURCE_ID)
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

/** The profile with this id (or the one it was merged into), or null. */
export async function readProfile(sql: ProfilesSql, id: string): Promise<Profile | null> {
  const resolved = await sql.resolve(id)
  if (resolved === undefined) return null
  const [row] = await sql.profiles([resolved])
  if (!row) return null
  const identities = await sql.identitiesOf([resolved])
  const of = (kind: IdentityKind) =>
    identities
      .filter((identity) => identity.kind === kind)
      .map((identity) => identity.value)
      .sort()
  return {
    id: row.id,
    userIds: of('user'),
    anonymousIds: of('anonymous'),
    traits: JSON.parse(row.traits) as Record<string, unknown>,
    computedTraits: {},
    audiences: [],
    firstSeenAt: row.first_seen_at,
    lastSeenAt: row.last_seen_at,
  }
}

export async function findProfile(sql: ProfilesSql, identity: ProfileIdentity): Promise<Profile | null> {
  const [kind, value]: [IdentityKind, string] =
    'userId' in identity ? ['user', identity.userId] : ['anonymous', identity.anonymousId]
  const [row]: IdentityRow[] = await sql.identities(kind, [value])
  return row ? readProfile(sql, row.profile_id) : null
}

/** One page of a profile's calls, newest first; `before` is the cursor the previous page gave. */
export async function readProfileEvents(
  sql: ProfilesSql,
  profileId: string,
  page: { limit: number; before?: number | undefined },
): Promise<{ events: ProfileEvent[]; next: number | null }> {
  const rows = await sql.events(profileId, page.limit, page.before ?? null)
  return {
    events: rows.map(toProfileEvent),
    next: rows.length === page.limit ? rows.at(-1)!.message_pk : null,
  }
}

function toProfileEvent(row: ProfileEventRow): ProfileEvent {
  return {
    sourceId: row.source_id,
    messageId: row.message_id,
    type: row.type,
    event: row.event,
    timestamp: row.occurred_at,
    properties: JSON.parse(row.properties) as Record<string, unknown>,
  }
}
