/**
 * A cheap necessary condition of a subscription, read from a call's stored JSON text (JSON.stringify
 * output) without parsing it: routing uses it to rule out, unparsed, the calls a destination cannot
 * want; anything it lets through is judged by Segment's `validate` as always.
 *
 * Segment's `=` on `type`, `event`, `name` and `userId` is exact string equality with a top-level
 * member. In JSON text, `"event":"` can only be a member named event with a string value (inside a
 * string every quote is escaped; a string followed by a colon is a key), at some depth. So the string
 * values of every `"event":"…"` in the text include the call's own `event` when it is a string: a
 * value absent from them cannot be the call's. Each message's values are read once per member name,
 * however many destinations ask (one indexOf loop, where a search per destination and value cost a
 * search-table set-up each).
 */
import type { Condition } from '../lib/subscription-language.ts'

/** The string values of each member name found in one call's JSON text, read on demand. */
export class JsonFacts {
  readonly #json: string
  readonly #values = new Map<string, Set<string>>()

  constructor(json: string) {
    this.#json = json
  }

  /** Whether some member `name` in the text has the string value `value`. */
  has(name: string, value: string): boolean {
    let values = this.#values.get(name)
    if (values === undefined) {
      values = stringValues(this.#json, name)
      this.#values.set(name, values)
    }
    return values.has(value)
  }
}

/** False only when the call whose facts these are cannot match. */
export type Prefilter = (facts: JsonFacts) => boolean

type Node = Condition['children'][number] | Condition

/** Top-level members an `=` condition compares exactly (validate: `actual === String(value)`). */
const TOP_LEVEL: Readonly<Record<string, string>> = {
  'event-type': 'type',
  event: 'event',
  name: 'name',
  userId: 'userId',
}

/** The prefilter of a parsed subscription; null when it has no condition to rule calls out by. */
export function prefilterOf(node: Node): Prefilter | null {
  if (node.type === 'group') {
    const children = (node as Condition).children.map(prefilterOf)
    if (node.operator === 'and') {
      const known = children.filter((child): child is Prefilter => child !== null)
      return known.length === 0 ? null : (facts) => known.every((child) => child(facts))
    }
    if (node.operator === 'or' && children.every((child) => child !== null)) {
      const all = children as Prefilter[]
      return (facts) => all.some((child) => child(facts))
    }
    return null
  }
  const name = TOP_LEVEL[node.type]
  if (name === undefined || node.operator !== '=' || !('value' in node)) return null
  const value = String(node.value)
  return (facts) => facts.has(name, value)
}

/**
 * The member names a prefilter may read: every top-level name an `=` condition compares, anywhere in
 * the tree (a superset of what `prefilterOf` uses, so the prefilter is a function of their values).
 */
export function prefilterNames(node: Node, names = new Set<string>()): Set<string> {
  if (node.type === 'group') {
    for (const child of (node as Condition).children) prefilterNames(child, names)
    return names
  }
  const name = TOP_LEVEL[node.type]
  if (name !== undefined && node.operator === '=') names.add(name)
  return names
}

/** Every string value of a member `name` in JSON text, decoded. */
function stringValues(json: string, name: string): Set<string> {
  const found = new Set<string>()
  const key = rawValuesKey(json, memberNeedle(name))
  if (key === NO_VALUE) return found
  // The key's separator is a control character, which JSON text never holds unescaped.
  for (const raw of key.split(VALUE_SEPARATOR))
    found.add(raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw)
  return found
}

const VALUE_SEPARATOR = '\u0001'
const NO_VALUE = '\u0002'

/**
 * The string values of a member in JSON text, undecoded, as one key (`needle` is `memberNeedle(name)`): the first value as it
 * is, each further one after U+0001; U+0002 when there is none. JSON.stringify escapes every control
 * character, so the key is unambiguous, and equal keys mean equal values.
 */
export function rawValuesKey(json: string, needle: string): string {
  let key: string | undefined
  let at = json.indexOf(needle)
  while (at !== -1) {
    const start = at + needle.length
    const end = closingQuote(json, start)
    if (end === -1) break
    const raw = json.slice(start, end)
    key = key === undefined ? raw : `${key}${VALUE_SEPARATOR}${raw}`
    at = json.indexOf(needle, end + 1)
  }
  return key ?? NO_VALUE
}

/** What precedes a string value of member `name` in JSON.stringify output. */
export function memberNeedle(name: string): string {
  return `"${name}":"`
}

/** Where the string starting at `start` (after its opening quote) closes; -1 if it does not. */
function closingQuote(json: string, start: number): number {
  let end = start
  // A backslash escapes the character after it.
  while (end < json.length) {
    const char = json.charCodeAt(end)
    if (char === 0x22) return end
    end += char === 0x5c ? 2 : 1
  }
  return -1
}
