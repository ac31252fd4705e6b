import {
  type ComputationStatus,
  checkCondition,
  checkWhere,
  MAX_WITHIN_DAYS,
  type WhereCondition,
  type WhereOperator,
} from './computed-traits.ts'
import { checkDefinitionLimits } from './definition-limits.ts'
import { NotFoundError, ValidationError } from './errors.ts'

/**
 * Audiences: a yes/no per profile, from a definition tree over the profile's calls, traits, computed
 * traits and other audiences; kept current and synced to destinations as identify calls carrying
 * `{key: true|false}`.
 */

export const COUNT_OPERATORS = ['=', '!=', '<', '<=', '>', '>='] as const
export type CountOperator = (typeof COUNT_OPERATORS)[number]

/** A node of an audience definition. */
export type AudienceNode =
  | { all: AudienceNode[] }
  | { any: AudienceNode[] }
  | { not: AudienceNode }
  | {
      event: string
      where?: WhereCondition[]
      /** Default: at least once. */
      count?: { op: CountOperator; value: number }
      withinDays?: number
    }
  | { trait: string; op: WhereOperator; value?: unknown }
  | { computedTrait: string; op: WhereOperator; value?: unknown }
  | { audience: string }

export interface Audience {
  id: string
  name: string
  /** The snake_cased name at creation. Never changes. */
  key: string
  definition: AudienceNode
  destinationIds: string[]
  /** Profiles without a userId are members too (synced with `userId: null` and their anonymousId). */
  includeAnonymous: boolean
  status: ComputationStatus
  /** Why it failed (status `failed`), else null. */
  error: string | null
  /** When an identify for it was last enqueued, or null. */
  lastSyncAt: number | null
  createdAt: number
  updatedAt: number
}

/** What a definition may refer to besides itself. */
export interface DefinitionContext {
  computedTraitKeys: ReadonlySet<string>
  /** Key → definition of every other audience (for references and cycles). */
  audiences: ReadonlyMap<string, AudienceNode>
  /** The key being defined (null for a preview): referring back to it is a cycle. */
  ownKey: string | null
}

/**
 * Checks a definition tree; a problem is a ValidationError whose field is the JSON pointer of the node
 * (under `at`, e.g. `/definition/all/1/count/op`).
 */
export function checkDefinition(node: unknown, context: DefinitionContext, at = '/definition'): AudienceNode {
  // Bounded first, without recursion: `check` below (and every later walk) recurses.
  checkDefinitionLimits(node, context.audiences, context.ownKey, at)
  check(node, context, at, context.ownKey === null ? [] : [context.ownKey])
  return node as AudienceNode
}

const LEAF_KINDS =
  '{"all": [...]}, {"any": [...]}, {"not": {...}}, {"event": …}, {"trait": …}, {"computedTrait": …} or {"audience": …}'

function check(node: unknown, context: DefinitionContext, at: string, path: string[]): void {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) {
    throw new ValidationError(at, `Each node of the definition is an object: one of ${LEAF_KINDS}.`)
  }
  const record = node as Record<string, unknown>
  const kinds = ['all', 'any', 'not', 'event', 'trait', 'computedTrait', 'audience'].filter(
    (kind) => kind in record,
  )
  if (kinds.length !== 1) {
    throw new ValidationError(
      at,
      `A node has exactly one of the members all, any, not, event, trait, computedTrait, audience; this one has ${kinds.length === 0 ? 'none' : kinds.join(', ')}.`,
    )
  }
  const kind = kinds[0]!
  if (kind === 'all' || kind === 'any') {
    const children = record[kind]
    if (!Array.isArray(children) || children.length === 0) {
      throw new ValidationError(`${at}/${kind}`, `"${kind}" takes a non-empty list of nodes.`)
    }
    children.forEach((child, index) => {
      check(child, context, `${at}/${kind}/${index}`, path)
    })
  } else if (kind === 'not') {
    check(record.not, context, `${at}/not`, path)
  } else if (kind === 'event') {
    checkEventLeaf(record, at)
  } else if (kind === 'trait' || kind === 'computedTrait') {
    if (typeof record[kind] !== 'string' || record[kind] === '') {
      throw new ValidationError(
        `${at}/${kind}`,
        `"${kind}" names a ${kind === 'trait' ? 'trait' : 'computed trait key'} (a non-empty string).`,
      )
    }
    if (kind === 'computedTrait' && !context.computedTraitKeys.has(record.computedTrait as string)) {
      throw new ValidationError(
        `${at}/computedTrait`,
        `No computed trait has the key "${String(record.computedTrait)}". List them with GET /api/v1/computed-traits.`,
      )
    }
    checkCondition({ op: record.op, value: record.value }, at)
  } else {
    const key = record.audience
    if (typeof key !== 'string' || !context.audiences.has(key)) {
      if (key === context.ownKey)
        throw new ValidationError(`${at}/audience`, `An audience cannot include itself ("${String(key)}").`)
      throw new ValidationError(
        `${at}/audience`,
        `No audience has the key "${String(key)}". List them with GET /api/v1/audiences.`,
      )
    }
    if (path.includes(key)) {
      throw new ValidationError(
        `${at}/audience`,
        `Referring to "${key}" here makes a cycle: ${[...path, key].join(' → ')}.`,
      )
    }
    check(context.audiences.get(key), context, `${at}/audience`, [...path, key])
  }
}

function checkEventLeaf(record: Record<string, unknown>, at: string): void {
  if (typeof record.event !== 'string' || record.event === '') {
    throw new ValidationError(`${at}/event`, '"event" names a track event (a non-empty string).')
  }
  if (record.where !== undefined) {
    if (!Array.isArray(record.where))
      throw new ValidationError(`${at}/where`, '"where" is a list of {property, op, value}.')
    checkWhere(record.where as WhereCondition[], `${at}/where`)
  }
  if (record.count !== undefined) {
    const count = record.count as Record<string, unknown>
    if (!(COUNT_OPERATORS as readonly unknown[]).includes(count?.op)) {
      throw new ValidationError(
        `${at}/count/op`,
        `"count.op" is one of ${COUNT_OPERATORS.join(', ')}; got ${JSON.stringify(count?.op)}.`,
      )
    }
    if (typeof count.value !== 'number' || !Number.isInteger(count.value) || count.value < 0) {
      throw new ValidationError(`${at}/count/value`, '"count.value" is a whole number of calls, 0 or more.')
    }
  }
  if (record.withinDays !== undefined) {
    const days = record.withinDays
    if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > MAX_WITHIN_DAYS) {
      throw new ValidationError(
        `${at}/withinDays`,
        `"withinDays" is a whole number of days from 1 to ${MAX_WITHIN_DAYS} (the history profiles keep).`,
      )
    }
  }
}

export function audienceNotFound(id: string): NotFoundError {
  return new NotFoundError(
    'audience_not_found',
    `No audience has id "${id}". List them with GET /api/v1/audiences.`,
  )
}

/** Every event name and window a definition reads (for queueing and window checks). */
export function eventLeaves(
  node: AudienceNode,
  audiences: ReadonlyMap<string, AudienceNode>,
  seen = new Set<string>(),
): { event: string; withinDays: number | null; where: WhereCondition[] }[] {
  if ('all' in node) return node.all.flatMap((child) => eventLeaves(child, audiences, seen))
  if ('any' in node) return node.any.flatMap((child) => eventLeaves(child, audiences, seen))
  if ('not' in node) return eventLeaves(node.not, audiences, seen)
  if ('event' in node)
    return [{ event: node.event, withinDays: node.withinDays ?? null, where: node.where ?? [] }]
  if ('audience' in node && !seen.has(node.audience)) {
    seen.add(node.audience)
    const other = audiences.get(node.audience)
    return other ? eventLeaves(other, audiences, seen) : []
  }
  return []
}
