/**
 * Whether a profile is in an audience: its definition tree evaluated over the profile's calls, traits,
 * computed trait values and memberships of the audiences it refers to. Pure.
 *
 * - `all`: every child holds; `any`: at least one; `not`: the child does not.
 * - `event`: the number of the profile's calls of that event matching `where` (within `withinDays`
 *   days before now, when given) compares with `count` (default: at least 1).
 * - `trait` / `computedTrait`: the profile's trait (or computed value, by key) compares with `value`
 *   by the `where` operators' rules (a missing value matches only `!=` and `not_exists`).
 * - `audience`: the profile is a member of that audience.
 */
import type { AudienceNode, CountOperator } from '../domain/audiences.ts'
import type { WhereCondition } from '../domain/computed-traits.ts'
import { type CallFacts, windowStart } from './aggregate.ts'
import { matchesAll } from './where.ts'

/** An audience `event` condition: which calls it counts. */
export interface EventCondition {
  event: string
  where: readonly WhereCondition[]
  withinDays: number | null
}

/** An audience `event` node as written: `where` and `withinDays` may be left out. */
export interface EventNode {
  event: string
  where?: WhereCondition[]
  withinDays?: number
}

export interface ProfileFacts {
  /**
   * How many of the profile's calls an `event` node counts at `now`. The node is the definition's own
   * object, the same for every profile evaluated against that definition (a fold keys on it).
   */
  count(node: EventNode, now: number): number
  traits: Record<string, unknown>
  /** Computed trait key → value. */
  computed: Record<string, unknown>
}

/** Facts from the profile's whole list of calls (previews, and tests). */
export function factsFromCalls(
  calls: readonly CallFacts[],
  traits: Record<string, unknown>,
  computed: Record<string, unknown>,
): ProfileFacts {
  return {
    count: (node, now) => {
      const { event, where, withinDays } = eventCondition(node)
      const since = windowStart(withinDays, now)
      return calls.filter(
        (call) => call.event === event && call.timestamp > since && matchesAll(call.properties, where),
      ).length
    },
    traits,
    computed,
  }
}

export class MembershipEvaluator {
  private readonly facts: ProfileFacts
  private readonly now: number
  private readonly audiences: ReadonlyMap<string, AudienceNode>
  private readonly memberships = new Map<string, boolean>()

  /** `audiences`: key → definition, for `audience` references. */
  constructor(facts: ProfileFacts, now: number, audiences: ReadonlyMap<string, AudienceNode>) {
    this.facts = facts
    this.now = now
    this.audiences = audiences
  }

  /** Membership of the audience with this key (evaluated once per profile). */
  memberOf(key: string): boolean {
    let member = this.memberships.get(key)
    if (member === undefined) {
      const definition = this.audiences.get(key)
      // Definitions are checked for cycles and references when saved; a reference to an audience
      // deleted since simply never holds.
      this.memberships.set(key, false)
      member = definition === undefined ? false : this.holds(definition)
      this.memberships.set(key, member)
    }
    return member
  }

  holds(node: AudienceNode): boolean {
    if ('all' in node) return node.all.every((child) => this.holds(child))
    if ('any' in node) return node.any.some((child) => this.holds(child))
    if ('not' in node) return !this.holds(node.not)
    if ('audience' in node) return this.memberOf(node.audience)
    if ('event' in node) {
      const count = this.facts.count(node, this.now)
      const { op, value } = node.count ?? { op: '>=', value: 1 }
      return compareCount(count, op, value)
    }
    const [name, values] =
      'trait' in node ? [node.trait, this.facts.traits] : [node.computedTrait, this.facts.computed]
    return matchesAll(values, [{ property: name, op: node.op, value: node.value }])
  }
}

function compareCount(count: number, op: CountOperator, value: number): boolean {
  switch (op) {
    case '=':
      return count === value
    case '!=':
      return count !== value
    case '<':
      return count < value
    case '<=':
      return count <= value
    case '>':
      return count > value
    case '>=':
      return count >= value
  }
}

/** The calls an `event` node counts, with its defaults filled in. */
export function eventCondition(node: EventNode): EventCondition {
  return { event: node.event, where: node.where ?? [], withinDays: node.withinDays ?? null }
}
