/**
 * An audience definition tried out before it is saved: how many profiles it holds for right now, and
 * the first few of them. Run by the store (ProfileStore.previewAudience) over every profile, a page at
 * a time; nothing is written.
 */
import { type AudienceNode, eventLeaves } from '../domain/audiences.ts'
import { setOwn } from '../lib/own-path.ts'
import type { ProfileSql } from '../store/core/profile-rules.ts'
import { toComputations } from '../store/tables/computations.ts'
import { factsFromCalls, MembershipEvaluator } from './audience-membership.ts'
import { audienceDefinitions, groupBy, speakingId, toCallFacts } from './computations.ts'

/** How many profiles a definition holds for right now, and the first few of them; nothing is saved. */
export async function previewAudience(
  sql: ProfileSql,
  tree: AudienceNode,
  includeAnonymous: boolean,
  sampleSize: number,
  now: number,
): Promise<{ size: number; sample: string[] }> {
  const computations = toComputations(await sql.computations.list())
  const definitions = audienceDefinitions(computations.audiences)
  const events = [...new Set(eventLeaves(tree, definitions).map((leaf) => leaf.event))]
  for (const audience of computations.audiences) {
    for (const leaf of eventLeaves(audience.definition, definitions))
      if (!events.includes(leaf.event)) events.push(leaf.event)
  }
  const keys = new Map(computations.traits.map((trait) => [trait.id, trait.key]))
  let size = 0
  const sample: string[] = []
  for (let afterId: string | null = null; ; ) {
    const profiles = await sql.profiles.page(afterId, PREVIEW_PAGE)
    if (profiles.length === 0) return { size, sample }
    afterId = profiles.at(-1)!.id
    const ids = profiles.map((profile) => profile.id)
    const callsOf = groupBy(
      events.length === 0 ? [] : await sql.computations.eventsOf(ids, events),
      (row) => row.profile_id,
    )
    const identitiesOf = groupBy(await sql.profiles.identitiesOf(ids), (row) => row.profile_id)
    const valuesOf = groupBy(await sql.computations.values(ids), (row) => row.profile_id)
    for (const profile of profiles) {
      const identities = identitiesOf.get(profile.id) ?? []
      if (!includeAnonymous && speakingId(identities, 'user') === null) continue
      const computed: Record<string, unknown> = {}
      for (const value of valuesOf.get(profile.id) ?? []) {
        const key = keys.get(value.computation_id)
        if (key !== undefined) setOwn(computed, key, JSON.parse(value.value))
      }
      const calls = (callsOf.get(profile.id) ?? []).map(toCallFacts)
      const facts = factsFromCalls(calls, JSON.parse(profile.traits), computed)
      if (!new MembershipEvaluator(facts, now, definitions).holds(tree)) continue
      size++
      if (sample.length < sampleSize) sample.push(profile.id)
    }
  }
}

/** Profiles read per page by a preview. */
const PREVIEW_PAGE = 1_000
