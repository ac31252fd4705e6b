/**
 * The audience builder's model. A draft is a definition as the form holds it (every input as typed);
 * `toDefinition` makes the definition the API takes; `pointers` give the JSON pointer of every input in
 * that definition, so that the API's 400, which names the node at fault (`/definition/all/1/op`), is
 * shown next to the input it is about.
 *
 * Plain TypeScript without React or the DOM: unit-tested under Node (packages/web/test).
 */
import type { AudienceNode, CountOperator, WhereCondition, WhereOperator } from '@sluice/server/api'

export type Draft =
  | { kind: 'all' | 'any'; children: Draft[] }
  | { kind: 'not'; child: Draft }
  | {
      kind: 'event'
      event: string
      where: WhereDraft[]
      /** Empty: at least once. */
      countOp: CountOperator | ''
      countValue: string
      withinDays: string
    }
  | { kind: 'trait' | 'computedTrait'; name: string; op: WhereOperator; value: string }
  | { kind: 'audience'; key: string }

export type DraftKind = Draft['kind']

/** One `where` filter as typed: the value is parsed when the definition is built. */
export interface WhereDraft {
  property: string
  op: WhereOperator
  value: string
}

/** The kinds of condition, in the order the form offers them, with their labels. */
export const KIND_LABELS: Readonly<Record<DraftKind, string>> = {
  all: 'All of',
  any: 'Any of',
  not: 'Not',
  event: 'Performed event',
  trait: 'Trait',
  computedTrait: 'Computed trait',
  audience: 'In audience',
}

export const DRAFT_KINDS = Object.keys(KIND_LABELS) as DraftKind[]

export function emptyDraft(kind: DraftKind): Draft {
  switch (kind) {
    case 'all':
    case 'any':
      return { kind, children: [emptyDraft('event')] }
    case 'not':
      return { kind, child: emptyDraft('event') }
    case 'event':
      return { kind, event: '', where: [], countOp: '', countValue: '1', withinDays: '' }
    case 'trait':
    case 'computedTrait':
      return { kind, name: '', op: '=', value: '' }
    default:
      return { kind: 'audience', key: '' }
  }
}

export const emptyWhere = (): WhereDraft => ({ property: '', op: '=', value: '' })

/** `exists` and `not_exists` compare with nothing: the form shows no value input for them. */
export const takesValue = (op: WhereOperator): boolean => op !== 'exists' && op !== 'not_exists'

/** A typed value: numbers, true/false and null as such, a comma-separated list for `in`, else text. */
function parseValue(op: WhereOperator, text: string): unknown {
  if (!takesValue(op)) return undefined
  if (op === 'in') return text.split(',').map((part) => parseValue('=', part.trim()))
  const trimmed = text.trim()
  if (trimmed !== '' && Number.isFinite(Number(trimmed))) return Number(trimmed)
  if (trimmed === 'true' || trimmed === 'false') return trimmed === 'true'
  if (trimmed === 'null') return null
  return text
}

/** `{value}` when the operator takes one, else nothing. */
function comparedWith(op: WhereOperator, text: string): { value?: unknown } {
  const value = parseValue(op, text)
  return value === undefined ? {} : { value }
}

/** The filters as the API takes them; empty means none. */
export function toWhere(where: WhereDraft[]): WhereCondition[] {
  return where.map(({ property, op, value }) => ({
    property: property.trim(),
    op,
    ...comparedWith(op, value),
  }))
}

/** Whole numbers stay numbers; anything else is sent as typed, for the API to point at. */
function parseWhole(text: string): number {
  const trimmed = text.trim()
  // Not a number: sent as the text typed, so that the API's 400 names this input (hence the cast).
  return (trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : trimmed) as number
}

/** The definition the API takes. It is checked by the API, whose 400 points into it. */
export function toDefinition(draft: Draft): AudienceNode {
  switch (draft.kind) {
    case 'all':
      return { all: draft.children.map(toDefinition) }
    case 'any':
      return { any: draft.children.map(toDefinition) }
    case 'not':
      return { not: toDefinition(draft.child) }
    case 'event':
      return {
        event: draft.event.trim(),
        ...(draft.where.length === 0 ? {} : { where: toWhere(draft.where) }),
        ...(draft.countOp === ''
          ? {}
          : { count: { op: draft.countOp, value: parseWhole(draft.countValue) } }),
        ...(draft.withinDays.trim() === '' ? {} : { withinDays: parseWhole(draft.withinDays) }),
      }
    case 'trait':
      return { trait: draft.name.trim(), op: draft.op, ...comparedWith(draft.op, draft.value) }
    case 'computedTrait':
      return { computedTrait: draft.name.trim(), op: draft.op, ...comparedWith(draft.op, draft.value) }
    default:
      return { audience: draft.key.trim() }
  }
}

/**
 * The JSON pointer of every input, given the pointer `at` of its node (the root is `/definition`).
 * They follow `toDefinition`: each names where that input's value lands in the definition.
 */
export const pointers = {
  /** The conditions of an `all` or `any` group; the i-th is `item(list, i)`. */
  group: (at: string, kind: 'all' | 'any') => `${at}/${kind}`,
  item: (list: string, index: number) => `${list}/${index}`,
  not: (at: string) => `${at}/not`,
  event: (at: string) => ({
    event: `${at}/event`,
    countOp: `${at}/count/op`,
    countValue: `${at}/count/value`,
    withinDays: `${at}/withinDays`,
    where: `${at}/where`,
  }),
  comparison: (at: string, kind: 'trait' | 'computedTrait') => ({
    name: `${at}/${kind}`,
    op: `${at}/op`,
    value: `${at}/value`,
  }),
  audience: (at: string) => `${at}/audience`,
  /** The i-th filter of the `where` list at `list`, and its inputs. */
  where: (list: string, index: number) => ({
    filter: `${list}/${index}`,
    property: `${list}/${index}/property`,
    op: `${list}/${index}/op`,
    value: `${list}/${index}/value`,
  }),
}

/** A value as the form's text input shows it: the inverse of `parseValue`. */
function valueText(op: WhereOperator, value: unknown): string {
  if (!takesValue(op) || value === undefined) return ''
  if (op === 'in' && Array.isArray(value)) return value.map((each) => valueText('=', each)).join(', ')
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** A saved definition as the builder edits it: `toDefinition(fromDefinition(node))` gives `node` back. */
export function fromDefinition(node: AudienceNode): Draft {
  if ('all' in node) return { kind: 'all', children: node.all.map(fromDefinition) }
  if ('any' in node) return { kind: 'any', children: node.any.map(fromDefinition) }
  if ('not' in node) return { kind: 'not', child: fromDefinition(node.not) }
  if ('event' in node) {
    return {
      kind: 'event',
      event: node.event,
      where: (node.where ?? []).map((condition) => ({
        property: condition.property,
        op: condition.op,
        value: valueText(condition.op, condition.value),
      })),
      countOp: node.count?.op ?? '',
      countValue: String(node.count?.value ?? 1),
      withinDays: node.withinDays === undefined ? '' : String(node.withinDays),
    }
  }
  if ('trait' in node)
    return { kind: 'trait', name: node.trait, op: node.op, value: valueText(node.op, node.value) }
  if ('computedTrait' in node) {
    return {
      kind: 'computedTrait',
      name: node.computedTrait,
      op: node.op,
      value: valueText(node.op, node.value),
    }
  }
  return { kind: 'audience', key: node.audience }
}
