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
import type { CallFacts } from './computed-value.ts'
import { matchesAll } from './where.ts'

export interface ProfileFacts {
  calls: readonly CallFacts[]
  traits: Record<string, unknown>
  /** Computed trait key → value. */
  computed: Record<string, unknown>
}

const DAY_MS = 86_400_000

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
      const since =
        node.withinDays === undefined ? Number.NEGATIVE_INFINITY : this.now - node.withinDays * DAY_MS
      const where = node.where ?? []
      const count = this.facts.calls.filter(
        (call) => call.event === node.event && call.timestamp > since && matchesAll(call.properties, where),
      ).length
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
