/**
 * Identity resolution for one batch of accepted messages, in memory: which profile each call belongs
 * to, which profiles merge, how traits combine. Pure: it reads the state loaded for the batch and
 * returns the rows (store/tables/profiles.ts) that the store applies in one transaction with the
 * profile cursor (consume.ts).
 *
 * Rules (docs/profiles.md):
 * - A call's `userId` and `anonymousId` are its identities; a call with neither has no profile.
 * - A call with both links them: an unknown one joins the other's profile; two different profiles
 *   merge, unless the anonymousId's profile already has a different userId (a shared device), in
 *   which case the call goes to the userId's profile and the anonymousId stays where it is.
 * - `alias` merges the profile of `previousId` (a userId or an anonymousId) into the profile of
 *   `userId`, always; an unknown `previousId` becomes an anonymousId of that profile.
 * - Identify traits merge trait by trait; for each, the call with the latest `timestamp` wins.
 */
import { randomBytes } from 'node:crypto'
import { ownValue, setOwn } from '../lib/own-path.ts'
import type { MessageRow } from '../store/tables/messages.ts'
import type {
  IdentityKind,
  IdentityRow,
  MergeRow,
  ProfileEventRow,
  ProfileRow,
} from '../store/tables/profiles.ts'

export interface WorkingProfile {
  id: string
  traits: Record<string, unknown>
  traitTimes: Record<string, number>
  firstSeenAt: number
  lastSeenAt: number
  userIds: Set<string>
}

/** What the batch reads before planning: every identity its calls name, and their profiles. */
export interface LoadedProfiles {
  identities: IdentityRow[]
  /** Every identity of the profiles above (to know which userIds each holds). */
  identitiesOfProfiles: IdentityRow[]
  profiles: ProfileRow[]
}

export interface PlannedBatch {
  merges: MergeRow[]
  profiles: ProfileRow[]
  identities: IdentityRow[]
  events: ProfileEventRow[]
}

/** The identities a stored message names, for loading them before planning. */
export function identitiesNamed(payload: Record<string, unknown>): { kind: IdentityKind; value: string }[] {
  const named: { kind: IdentityKind; value: string }[] = []
  const userId = idOf(payload.userId)
  const anonymousId = idOf(payload.anonymousId)
  const previousId = payload.type === 'alias' ? idOf(payload.previousId) : null
  if (userId !== null) named.push({ kind: 'user', value: userId })
  if (anonymousId !== null) named.push({ kind: 'anonymous', value: anonymousId })
  if (previousId !== null)
    named.push({ kind: 'user', value: previousId }, { kind: 'anonymous', value: previousId })
  return named
}

/**
 * A new profile's id: `prf_`, then the creation time (6 bytes of epoch ms) and 6 random bytes, in hex.
 * Ids of profiles created about the same time sort together, so the rows keyed by profile that a batch
 * writes (profiles, identities, computed values, the queue) land on a few index pages rather than on
 * one page each.
 */
export function newProfileId(now = Date.now()): string {
  const bytes = randomBytes(12)
  bytes.writeUIntBE(now, 0, 6)
  return `prf_${bytes.toString('hex')}`
}

/** Ids arrive as non-empty strings (the Tracking API turns numbers into strings and drops blanks). */
function idOf(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null
}

const key = (kind: IdentityKind, value: string) => `${kind}\u0000${value}`

export function planBatch(
  messages: { row: MessageRow; payload: Record<string, unknown> }[],
  loaded: LoadedProfiles,
): PlannedBatch {
  return new BatchPlanner(loaded).plan(messages)
}

class BatchPlanner {
  /** identity key → profile id, kept current through the batch's links and merges. */
  private readonly owners = new Map<string, string>()
  private readonly profiles = new Map<string, WorkingProfile>()
  /** Profiles merged away in this batch → the profile they went into. */
  private readonly mergedInto = new Map<string, string>()
  private readonly merges: MergeRow[] = []
  private readonly touched = new Set<string>()
  private readonly newIdentities = new Map<string, IdentityRow>()
  private readonly events: ProfileEventRow[] = []

  constructor(loaded: LoadedProfiles) {
    for (const row of loaded.profiles) {
      this.profiles.set(row.id, {
        id: row.id,
        traits: JSON.parse(row.traits) as Record<string, unknown>,
        traitTimes: JSON.parse(row.trait_times) as Record<string, number>,
        firstSeenAt: row.first_seen_at,
        lastSeenAt: row.last_seen_at,
        userIds: new Set(),
      })
    }
    for (const row of [...loaded.identities, ...loaded.identitiesOfProfiles]) {
      this.owners.set(key(row.kind, row.value), row.profile_id)
      if (row.kind === 'user') this.profiles.get(row.profile_id)?.userIds.add(row.value)
    }
  }

  plan(messages: { row: MessageRow; payload: Record<string, unknown> }[]): PlannedBatch {
    for (const { row, payload } of messages) this.consume(row, payload)
    const survivor = (id: string): string => {
      let current = id
      for (let next = this.mergedInto.get(current); next !== undefined; next = this.mergedInto.get(current)) {
        current = next
      }
      return current
    }
    return {
      merges: this.merges,
      profiles: [...this.touched]
        .filter((id) => !this.mergedInto.has(id))
        .map((id) => {
          const profile = this.profiles.get(id)!
          return {
            id,
            traits: JSON.stringify(profile.traits),
            trait_times: JSON.stringify(profile.traitTimes),
            first_seen_at: profile.firstSeenAt,
            last_seen_at: profile.lastSeenAt,
          }
        }),
      identities: [...this.newIdentities.values()].map((row) => ({
        ...row,
        profile_id: survivor(row.profile_id),
      })),
      events: this.events.map((event) => ({ ...event, profile_id: survivor(event.profile_id) })),
    }
  }

  private consume(row: MessageRow, payload: Record<string, unknown>): void {
    const userId = idOf(payload.userId)
    const anonymousId = idOf(payload.anonymousId)
    if (userId === null && anonymousId === null) return
    const timestamp = timeOf(payload.timestamp) ?? row.received_at
    let profile = this.resolve(userId, anonymousId, timestamp)
    if (payload.type === 'alias' && userId !== null) {
      const previousId = idOf(payload.previousId)
      if (previousId !== null && previousId !== userId) profile = this.alias(previousId, profile, timestamp)
    }
    this.see(profile, timestamp)
    if (payload.type === 'identify') this.mergeTraits(profile, payload.traits, timestamp)
    this.events.push({
      message_pk: row.pk,
      profile_id: profile.id,
      source_id: row.source_id,
      message_id: row.message_id,
      type: row.type,
      event: payload.type === 'track' && typeof payload.event === 'string' ? payload.event : null,
      occurred_at: timestamp,
      properties: JSON.stringify(propertiesOf(payload)),
    })
  }

  /** The profile a call with these identities belongs to, linking or merging as the rules say. */
  private resolve(userId: string | null, anonymousId: string | null, timestamp: number): WorkingProfile {
    const byUser = userId === null ? undefined : this.ownerOf('user', userId)
    let byAnonymous = anonymousId === null ? undefined : this.ownerOf('anonymous', anonymousId)
    // A shared device: the anonymousId's profile is another user's. It stays theirs.
    const sharedDevice =
      userId !== null &&
      byAnonymous !== undefined &&
      [...byAnonymous.userIds].some((other) => other !== userId)
    if (sharedDevice) byAnonymous = undefined
    let profile: WorkingProfile
    if (byUser && byAnonymous && byUser !== byAnonymous) profile = this.merge(byAnonymous, byUser)
    else profile = byUser ?? byAnonymous ?? this.create(timestamp)
    if (userId !== null && !byUser) this.link(profile, 'user', userId, timestamp)
    if (anonymousId !== null && !byAnonymous && !sharedDevice) {
      this.link(profile, 'anonymous', anonymousId, timestamp)
    }
    return profile
  }

  private alias(previousId: string, target: WorkingProfile, timestamp: number): WorkingProfile {
    const previous = this.ownerOf('user', previousId) ?? this.ownerOf('anonymous', previousId)
    if (!previous) {
      this.link(target, 'anonymous', previousId, timestamp)
      return target
    }
    if (previous === target) return target
    this.see(previous, timestamp)
    return this.merge(previous, target)
  }

  private ownerOf(kind: IdentityKind, value: string): WorkingProfile | undefined {
    const id = this.owners.get(key(kind, value))
    return id === undefined ? undefined : this.profiles.get(id)
  }

  private create(timestamp: number): WorkingProfile {
    const profile: WorkingProfile = {
      id: newProfileId(),
      traits: {},
      traitTimes: {},
      firstSeenAt: timestamp,
      lastSeenAt: timestamp,
      userIds: new Set(),
    }
    this.profiles.set(profile.id, profile)
    this.touched.add(profile.id)
    return profile
  }

  private link(profile: WorkingProfile, kind: IdentityKind, value: string, timestamp: number): void {
    const identityKey = key(kind, value)
    this.owners.set(identityKey, profile.id)
    this.newIdentities.set(identityKey, { kind, value, profile_id: profile.id, linked_at: timestamp })
    if (kind === 'user') profile.userIds.add(value)
    this.touched.add(profile.id)
  }

  /** Moves `from` into `into` (traits by time, first/last seen, identities); returns `into`. */
  private merge(from: WorkingProfile, into: WorkingProfile): WorkingProfile {
    for (const [trait, time] of Object.entries(from.traitTimes)) {
      if (!(time < traitTime(into, trait))) {
        setOwn(into.traits, trait, ownValue(from.traits, trait))
        setOwn(into.traitTimes, trait, time)
      }
    }
    into.firstSeenAt = Math.min(into.firstSeenAt, from.firstSeenAt)
    into.lastSeenAt = Math.max(into.lastSeenAt, from.lastSeenAt)
    for (const userId of from.userIds) into.userIds.add(userId)
    for (const [identityKey, owner] of this.owners)
      if (owner === from.id) this.owners.set(identityKey, into.id)
    this.mergedInto.set(from.id, into.id)
    this.merges.push({ from_id: from.id, into_id: into.id })
    this.touched.add(into.id)
    return into
  }

  private see(profile: WorkingProfile, timestamp: number): void {
    profile.firstSeenAt = Math.min(profile.firstSeenAt, timestamp)
    profile.lastSeenAt = Math.max(profile.lastSeenAt, timestamp)
    this.touched.add(profile.id)
  }

  private mergeTraits(profile: WorkingProfile, traits: unknown, timestamp: number): void {
    if (typeof traits !== 'object' || traits === null || Array.isArray(traits)) return
    for (const [trait, value] of Object.entries(traits)) {
      // Equal timestamps: the call consumed later wins (arrival order).
      if (timestamp >= traitTime(profile, trait)) {
        setOwn(profile.traits, trait, value)
        setOwn(profile.traitTimes, trait, timestamp)
      }
    }
  }
}

/** When the profile's trait was last set; -Infinity: never (a trait may be named `constructor`). */
function traitTime(profile: WorkingProfile, trait: string): number {
  const time = ownValue(profile.traitTimes, trait)
  return typeof time === 'number' ? time : Number.NEGATIVE_INFINITY
}

function timeOf(value: unknown): number | null {
  if (typeof value !== 'string') return null
  const time = Date.parse(value)
  return Number.isNaN(time) ? null : time
}

function propertiesOf(payload: Record<string, unknown>): Record<string, unknown> {
  const found = payload.type === 'identify' || payload.type === 'group' ? payload.traits : payload.properties
  const properties =
    typeof found === 'object' && found !== null && !Array.isArray(found)
      ? (found as Record<string, unknown>)
      : {}
  // A page or screen call's name is its own field; browser SDKs also copy it into the properties, as
  // the profile keeps it, so that a profile's calls all show what they were.
  if (
    (payload.type === 'page' || payload.type === 'screen') &&
    typeof payload.name === 'string' &&
    payload.name !== '' &&
    !Object.hasOwn(properties, 'name')
  )
    return { ...properties, name: payload.name }
  return properties
}
