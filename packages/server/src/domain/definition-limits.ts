import { escapePointerToken } from '../lib/json-pointer.ts'
import { thousands } from '../lib/thousands.ts'
import { ValidationError } from './errors.ts'

/**
 * How large an audience definition may be. Definitions are walked recursively (checked when saved,
 * evaluated for every profile, serialized by the store and the API), so a tree nested thousands of
 * levels deep would exhaust the stack on one of those walks. These bounds are checked first, by
 * `checkDefinitionLimits`, which walks iteratively (its own stack, not the call stack), so no
 * definition, however deep, reaches a recursive walk before it has passed them.
 *
 * The bounds count the definition as it is evaluated: an `{"audience": key}` reference stands for
 * the definition of that audience, so its levels and nodes count where it is referred to.
 */

/** Most levels of nodes: the root is level 1; each `all`/`any` child, `not` child or referenced definition is one level deeper. */
export const MAX_DEFINITION_DEPTH = 32
/** Most nodes: every `all`/`any`/`not` and leaf node, and every `where` condition. Far above any real audience. */
export const MAX_DEFINITION_NODES = 1_000
/** Most conditions in one `where` list (of an audience's event node or of a computed trait). */
export const MAX_WHERE_CONDITIONS = 100
/**
 * Deepest nesting of JSON objects and arrays anywhere in a definition (values compared with
 * included). A definition of `MAX_DEFINITION_DEPTH` levels needs about 70; the same as the Tracking
 * API's limit for a message.
 */
export const MAX_JSON_DEPTH = 100

interface Frame {
  value: unknown
  /** JSON pointer of `value` in the request. */
  at: string
  /** Objects and arrays above and including this one. */
  jsonDepth: number
  /** Definition level of this node, or 0 when `value` is not a definition node. */
  level: number
  /** Keys of the referenced audiences being expanded around this frame (a cycle is not expanded again). */
  expanding: readonly string[]
}

/**
 * Refuses a definition over the bounds above with a ValidationError naming the node (as a JSON
 * pointer under `at`) and how to shrink it. It does not judge the tree's shape (checkDefinition does,
 * afterwards): whatever it does not understand, it only measures. `audiences` maps keys to the
 * definitions of the audiences a reference may name; `ownKey` (the audience being defined, null for a
 * preview) is never expanded, nor is a key already being expanded: the shape check reports the cycle.
 */
export function checkDefinitionLimits(
  definition: unknown,
  audiences: ReadonlyMap<string, unknown>,
  ownKey: string | null,
  at: string,
): void {
  const stack: Frame[] = [{ value: definition, at, jsonDepth: 1, level: 1, expanding: [] }]
  let nodes = 0
  while (stack.length > 0) {
    const frame = stack.pop()!
    const { value, level } = frame
    if (level > MAX_DEFINITION_DEPTH) {
      throw new ValidationError(
        frame.at,
        `The definition nests more than ${MAX_DEFINITION_DEPTH} levels deep here (each "all", "any", "not" and referenced audience is a level). Flatten it: merge nested "all" (or "any") lists into one, and write "not" of "not" as the node itself.`,
      )
    }
    if (level > 0 && ++nodes > MAX_DEFINITION_NODES) throw tooManyNodes(frame.at)
    if (typeof value !== 'object' || value === null) continue
    if (frame.jsonDepth > MAX_JSON_DEPTH) {
      throw new ValidationError(
        frame.at,
        `The definition is nested more than ${MAX_JSON_DEPTH} levels deep here (objects and arrays inside each other); no definition needs that many. Flatten the value.`,
      )
    }
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        stack.push(child(frame, item, `${frame.at}/${index}`, 0))
      })
      continue
    }
    for (const [key, member] of Object.entries(value)) {
      const memberAt = `${frame.at}/${escapePointerToken(key)}`
      const isNodeList = level > 0 && (key === 'all' || key === 'any') && Array.isArray(member)
      if (isNodeList) {
        // The list is not a node itself; its items are, one level down.
        const list = child(frame, member, memberAt, 0)
        member.forEach((item, index) => {
          stack.push(child(list, item, `${memberAt}/${index}`, level + 1))
        })
      } else if (level > 0 && key === 'where' && Array.isArray(member)) {
        if (member.length > MAX_WHERE_CONDITIONS) throw tooManyConditions(memberAt, member.length)
        nodes += member.length
        if (nodes > MAX_DEFINITION_NODES) throw tooManyNodes(memberAt)
        stack.push(child(frame, member, memberAt, 0))
      } else {
        stack.push(child(frame, member, memberAt, level > 0 && key === 'not' ? level + 1 : 0))
      }
    }
    const reference = (value as Record<string, unknown>).audience
    if (
      level > 0 &&
      typeof reference === 'string' &&
      reference !== ownKey &&
      !frame.expanding.includes(reference) &&
      audiences.has(reference)
    ) {
      stack.push({
        value: audiences.get(reference),
        at: `${frame.at}/audience`,
        jsonDepth: frame.jsonDepth + 1,
        level: level + 1,
        expanding: [...frame.expanding, reference],
      })
    }
  }
}

function child(parent: Frame, value: unknown, at: string, level: number): Frame {
  return { value, at, jsonDepth: parent.jsonDepth + 1, level, expanding: parent.expanding }
}

function tooManyConditions(at: string, count: number): ValidationError {
  return new ValidationError(
    at,
    `"where" has ${count} conditions; at most ${MAX_WHERE_CONDITIONS} are allowed. Combine conditions on the same property into one "in" condition.`,
  )
}

function tooManyNodes(at: string): ValidationError {
  return new ValidationError(
    at,
    `The definition has more than ${thousands(MAX_DEFINITION_NODES)} nodes (conditions, "all"/"any"/"not", where conditions, and the nodes of the audiences it refers to, each time it refers to them); this is where the count ran over. Simplify it: one "in" condition replaces many "=" conditions on the same property.`,
  )
}
