/**
 * A destination's mapping: a JSON object in Segment's mapping language (`@path`, `@template`, `@if`,
 * `@literal`, `@arrayPath`, `@case`, `@replace`, … nested in plain objects and arrays), applied to the
 * call; its result is the body sent. Run by Segment's own implementation, `transform` from
 * `@segment/actions-core`'s mapping kit, so a mapping copied from a Segment Actions destination gives
 * the same body here.
 *
 * The package's ESM build does not load under Node (its imports have no file extensions), so the
 * CommonJS build is required; its mapping kit loads `liquidjs` (for `@liquid`) without declaring it,
 * which is why Sluice lists that package itself.
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { isJsonObject } from './json-object.ts'
import { escapePointerToken } from './json-pointer.ts'

// Typed here rather than from the package's declarations: those pull in an older @types/node of its own,
// whose globals clash with the project's.
type Transform = (mapping: Record<string, unknown>, data: Record<string, unknown>) => Record<string, unknown>
interface MappingKit {
  transform: Transform
  validate: (mapping: unknown) => void
  /** `transform` without its own check of the mapping; null when the kit cannot be run that way. */
  transformChecked: Transform | null
  /** The kit's own `get` (what `@path` reads with) and `removeUndefined` (what `transform` ends with). */
  get: ((data: unknown, path: string | readonly string[]) => unknown) | null
  removeUndefined: ((value: unknown) => unknown) | null
}

let kit: MappingKit | undefined
/**
 * The kit, loaded on first use: most Sluice processes have no mapping, and loading it (with its
 * template engine) costs ~15 MB of resident memory for the life of the process.
 */
function mappingKit(): MappingKit {
  if (kit === undefined) {
    const require = createRequire(import.meta.url)
    const { transform } = require('@segment/actions-core/mapping-kit') as { transform: Transform }
    const validateModule = require('@segment/actions-core/mapping-kit/validate') as {
      default: MappingKit['validate']
    }
    const validate = validateModule.default
    // Modules the package does not export: required by file, beside the mapping kit's own.
    const kitFile = (name: string) =>
      join(dirname(require.resolve('@segment/actions-core/mapping-kit')), '..', `${name}.js`)
    let get: MappingKit['get'] = null
    let removeUndefined: MappingKit['removeUndefined'] = null
    try {
      get = (require(kitFile('get')) as { get: NonNullable<MappingKit['get']> }).get
      removeUndefined = (
        require(kitFile('remove-undefined')) as {
          removeUndefined: NonNullable<MappingKit['removeUndefined']>
        }
      ).removeUndefined
    } catch {
      // Another layout: every field goes through `transform`.
    }
    kit = {
      transform,
      validate,
      transformChecked: uncheckedTransform(transform, validateModule),
      get: typeof get === 'function' ? get : null,
      removeUndefined: typeof removeUndefined === 'function' ? removeUndefined : null,
    }
  }
  return kit
}

/**
 * `transform` checks the whole mapping on every call before resolving it: a third of the cost of a
 * ten-field mapping, for a verdict that depends on the mapping alone. The kit looks its checker up
 * on the checker module's exports at each call, so for a mapping already accepted, the checker is
 * swapped for a no-op for the length of the (synchronous) call; the resolving itself is the kit's own.
 * Null, and every call checked, should a version of the kit not reach its checker that way.
 */
function uncheckedTransform(
  transform: Transform,
  validateModule: { default: MappingKit['validate'] },
): Transform | null {
  const validate = validateModule.default
  let reached = false
  const probe = () => {
    reached = true
  }
  try {
    validateModule.default = probe
    transform({}, {})
  } catch {
    return null
  } finally {
    validateModule.default = validate
  }
  if (!reached) return null
  const skip = () => {}
  return (mapping, data) => {
    validateModule.default = skip
    try {
      return transform(mapping, data)
    } finally {
      validateModule.default = validate
    }
  }
}

/** Largest mapping accepted, in bytes of its JSON text. */
export const MAX_MAPPING_BYTES = 32 * 1024

export type Mapping = Record<string, unknown>

/** Why a mapping was refused: `pointer` is a JSON pointer inside the mapping ('' for the whole). */
export class MappingError extends Error {
  readonly pointer: string
  constructor(pointer: string, message: string) {
    super(message)
    this.name = 'MappingError'
    this.pointer = pointer
  }
}

/** Throws `MappingError` naming the first offending place (unknown directive, two directives in one object, …). */
export function checkMapping(mapping: unknown): asserts mapping is Mapping {
  if (!isJsonObject(mapping)) {
    throw new MappingError('', 'the mapping must be an object, e.g. {"event": {"@path": "$.event"}}.')
  }
  const bytes = Buffer.byteLength(JSON.stringify(mapping), 'utf8')
  if (bytes > MAX_MAPPING_BYTES) {
    throw new MappingError(
      '',
      `the mapping is ${bytes} bytes of JSON; at most ${MAX_MAPPING_BYTES} are allowed.`,
    )
  }
  checkAt(mapping, '')
}

/**
 * The kit's validator checks objects but passes over arrays, whose items `transform` resolves all the
 * same; so each object inside an array is checked too, with its pointer.
 */
function checkAt(value: unknown, pointer: string): void {
  if (isJsonObject(value)) {
    validateAt(value, pointer)
    for (const [key, child] of Object.entries(value))
      findArrays(child, `${pointer}/${escapePointerToken(key)}`)
  } else {
    findArrays(value, pointer)
  }
}

function findArrays(value: unknown, pointer: string): void {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) checkAt(item, `${pointer}/${index}`)
  } else if (isJsonObject(value)) {
    for (const [key, child] of Object.entries(value))
      findArrays(child, `${pointer}/${escapePointerToken(key)}`)
  }
}

function validateAt(mapping: Record<string, unknown>, at: string): void {
  try {
    mappingKit().validate(mapping)
  } catch (error) {
    // The kit reports several problems as one iterable error (aggregate-error's); the first is enough to fix.
    const first =
      typeof error === 'object' && error !== null && Symbol.iterator in error
        ? [...(error as Iterable<unknown>)][0]
        : error
    const text = first instanceof Error ? first.message : String(first)
    // Its messages start with the path: "/a/b should only have one @-prefixed key …".
    const space = text.indexOf(' ')
    const pointer = text.startsWith('/') && space > 0 ? text.slice(0, space).replace(/\/$/, '') : ''
    throw new MappingError(`${at}${pointer}`, space > 0 ? text.slice(space + 1) : text)
  }
}

/**
 * A mapping ready to run again: its top-level fields whose value is one of the simple forms below,
 * resolved here as the kit's directives resolve them (the `@path` member names its `get` reads worked out
 * once: the kit splits the text with a regular expression on every call, most of what a path costs);
 * the other fields (`@template`, `@replace`, `@arrayPath`, nested objects, …) by one `transform` of them
 * alone. Then, as `transform` does, each value is passed through the kit's `removeUndefined`. The
 * differential tests compare every form with `transform` over generated calls.
 */
type Expression =
  /** A JSON scalar, or `{"@literal": scalar}`: the value itself. */
  | { kind: 'constant'; value: unknown }
  /** `{"@path": "text"}`. */
  | { kind: 'path'; members: readonly string[] }
  /** `{"@case": {"operator": "lower" | "upper", "value": expression}}`: a string's case changed, else the value. */
  | { kind: 'case'; upper: boolean; value: Expression }
  /** `{"@if": {"exists": expression, "then"?: expression, "else"?: expression}}`. */
  | { kind: 'if'; exists: Expression; then: Expression | undefined; else: Expression | undefined }
  /** `{"@template": "text {{path}} …"}` without triple braces: its texts, and between them paths. */
  | { kind: 'template'; texts: readonly string[]; paths: readonly (readonly string[])[] }
  /** `{"@replace": {"pattern", "replacement"?, "ignorecase"?, "global"?, "value"}}`, without a second pattern. */
  | { kind: 'replace'; pattern: RegExp; replacement: string; value: Expression }

interface CompiledMapping {
  fields: ({ key: string; kind: 'expression'; expression: Expression } | { key: string; kind: 'kit' })[]
  /** The fields left to `transform`; null when there are none. */
  rest: Mapping | null
}

/** Mappings `transform` has accepted (a stored mapping object is never modified), compiled when they can be. */
const accepted = new WeakMap<Mapping, CompiledMapping | null>()

/** The body for one call; throws (with the mapping kit's reason) when the mapping fails on this call. */
export function applyMapping(mapping: Mapping, call: Record<string, unknown>): Record<string, unknown> {
  const kit = mappingKit()
  const { transform, transformChecked } = kit
  const compiled = accepted.get(mapping)
  if (compiled === undefined || transformChecked === null) {
    // The kit's own check runs on a mapping's first call, so a mapping it refuses fails as it would there.
    const body = transform(mapping, call)
    accepted.set(mapping, compileMapping(mapping, kit))
    return body
  }
  if (compiled === null) return transformChecked(mapping, call)
  // The kit's part comes back as `transform` ends: members that resolved to undefined left out, the
  // rest cleaned by `removeUndefined`. The other members get the same here, in mapping order.
  const fromKit = compiled.rest === null ? null : transformChecked(compiled.rest, call)
  const { removeUndefined } = kit
  const body: Record<string, unknown> = {}
  for (const field of compiled.fields) {
    if (field.kind === 'kit') {
      if (Object.hasOwn(fromKit!, field.key)) body[field.key] = fromKit![field.key]
      continue
    }
    const value = evaluate(field.expression, call)
    if (value === undefined) continue
    // `removeUndefined` gives back anything but an object or array as it is.
    body[field.key] = typeof value === 'object' && value !== null ? removeUndefined!(value) : value
  }
  return body
}

/** An expression's value for a call, as the kit's directives give it. */
function evaluate(expression: Expression, call: Record<string, unknown>): unknown {
  switch (expression.kind) {
    case 'constant':
      return expression.value
    case 'path':
      return read(call, expression.members)
    case 'template': {
      // As the kit's `render`: each placeholder's value, or '' when it is null or undefined, as text.
      let text = expression.texts[0]!
      for (let i = 0; i < expression.paths.length; i++)
        text += String(read(call, expression.paths[i]!) ?? '') + expression.texts[i + 1]!
      return text
    }
    case 'replace': {
      let value = evaluate(expression.value, call)
      if (typeof value === 'boolean' || typeof value === 'number') value = String(value)
      return typeof value === 'string' ? value.replace(expression.pattern, expression.replacement) : ''
    }
    case 'case': {
      const value = evaluate(expression.value, call)
      if (typeof value !== 'string') return value
      return expression.upper ? value.toUpperCase() : value.toLowerCase()
    }
    case 'if': {
      const tested = evaluate(expression.exists, call)
      const holds = tested !== undefined && tested !== null
      if (holds && expression.then !== undefined) return evaluate(expression.then, call)
      if (!holds && expression.else !== undefined) return evaluate(expression.else, call)
      return undefined
    }
  }
}

/** The kit's `get` over a list of member names: `reduce((object, key) => object && object[key], data)`. */
function read(call: Record<string, unknown>, members: readonly string[]): unknown {
  let value: unknown = call
  for (const member of members)
    value = value && (value as Record<string, unknown>)[member as keyof typeof value]
  return value
}

/** Null when no field can be resolved here (the whole mapping then goes to `transformChecked`). */
function compileMapping(mapping: Mapping, kit: MappingKit): CompiledMapping | null {
  const { get } = kit
  if (get === null || kit.removeUndefined === null) return null
  const keys = Object.keys(mapping)
  // `transform` gives these their own meaning, or assigns them as no other key.
  if (keys.some((key) => key === '__proto__' || key.startsWith('__segment'))) return null
  const fields: CompiledMapping['fields'] = []
  const rest: Mapping = {}
  for (const key of keys) {
    const expression = compileExpression(mapping[key], get)
    if (expression !== null) {
      fields.push({ key, kind: 'expression', expression })
    } else {
      fields.push({ key, kind: 'kit' })
      rest[key] = mapping[key]
    }
  }
  if (fields.every((field) => field.kind === 'kit')) return null
  return { fields, rest: Object.keys(rest).length === 0 ? null : rest }
}

const isScalar = (value: unknown) => value === null || typeof value !== 'object'

/**
 * The expression for a mapping value, or null when it is not one of the forms above exactly (any
 * other key, operator or shape is left to the kit, which also gives its errors).
 */
function compileExpression(value: unknown, get: NonNullable<MappingKit['get']>): Expression | null {
  if (isScalar(value)) return { kind: 'constant', value }
  if (!isJsonObject(value)) return null
  const keys = Object.keys(value)
  if (keys.length !== 1) return null
  const argument = value[keys[0]!]
  switch (keys[0]) {
    case '@path':
      return typeof argument === 'string'
        ? { kind: 'path', members: membersRead(get, argument.replace('$.', '')) }
        : null
    case '@template':
      return typeof argument === 'string' && !argument.includes('{{{') ? compileTemplate(argument, get) : null
    case '@replace':
      return compileReplace(argument, get)
    case '@literal':
      // The kit resolves its argument: a scalar is itself.
      return isScalar(argument) ? { kind: 'constant', value: argument } : null
    case '@case': {
      if (!isJsonObject(argument) || !sameKeys(argument, ['operator', 'value'])) return null
      const { operator } = argument
      // An object argument is truthy, which the kit asks of `value` before resolving it.
      if ((operator !== 'lower' && operator !== 'upper') || !isJsonObject(argument.value)) return null
      const inner = compileExpression(argument.value, get)
      return inner === null ? null : { kind: 'case', upper: operator === 'upper', value: inner }
    }
    case '@if': {
      if (!isJsonObject(argument) || !isJsonObject(argument.exists)) return null
      if (Object.keys(argument).some((key) => key !== 'exists' && key !== 'then' && key !== 'else'))
        return null
      const exists = compileExpression(argument.exists, get)
      // The kit resolves `then` when it is present, and `else` only when it is truthy.
      const then = 'then' in argument ? compileExpression(argument.then, get) : undefined
      const otherwise = argument.else ? compileExpression(argument.else, get) : undefined
      if (exists === null || then === null || otherwise === null) return null
      return { kind: 'if', exists, then, else: otherwise }
    }
    default:
      return null
  }
}

/**
 * The kit renders `{{{path}}}` placeholders first and then `{{path}}` ones over the result, so a value
 * holding braces could be rendered again: templates with triple braces stay with the kit. Without them,
 * the first pass changes nothing and the second is one pass of PLACEHOLDER over the text.
 */
const PLACEHOLDER = /\{\{([^}]+)\}\}/g

function compileTemplate(template: string, get: NonNullable<MappingKit['get']>): Expression {
  const texts: string[] = []
  const paths: (readonly string[])[] = []
  let from = 0
  for (const match of template.matchAll(PLACEHOLDER)) {
    texts.push(template.slice(from, match.index))
    paths.push(membersRead(get, match[0].slice(2, -2).trim()))
    from = match.index + match[0].length
  }
  texts.push(template.slice(from))
  return { kind: 'template', texts, paths }
}

/** The kit's limits on `@replace`'s texts: beyond them it fails every call, which is left to it. */
const REPLACE_TEXT_LIMIT = 10

function compileReplace(argument: unknown, get: NonNullable<MappingKit['get']>): Expression | null {
  if (!isJsonObject(argument)) return null
  const allowed = ['pattern', 'replacement', 'ignorecase', 'global', 'value']
  if (Object.keys(argument).some((key) => !allowed.includes(key))) return null
  // As the kit defaults them (it writes these defaults into the mapping on its first call).
  const { pattern, value } = argument
  const replacement = argument.replacement ?? ''
  const ignorecase = argument.ignorecase ?? false
  const global = argument.global ?? true
  if (typeof pattern !== 'string' || pattern === '' || pattern.length > REPLACE_TEXT_LIMIT) return null
  if (typeof replacement !== 'string' || replacement.length > REPLACE_TEXT_LIMIT) return null
  if (typeof ignorecase !== 'boolean' || typeof global !== 'boolean') return null
  // A falsy value makes the kit give undefined; a truthy scalar is itself.
  if (!value) return null
  const inner = compileExpression(value, get)
  if (inner === null) return null
  const escaped = pattern.replace(/[-[\]{}()*+?.,\\^$|#\s]/g, '\\$&')
  const flags = `${global ? 'g' : ''}${ignorecase ? 'i' : ''}`
  return { kind: 'replace', pattern: new RegExp(escaped, flags), replacement, value: inner }
}

function sameKeys(object: Record<string, unknown>, keys: readonly string[]): boolean {
  const own = Object.keys(object)
  return own.length === keys.length && keys.every((key) => Object.hasOwn(object, key))
}

/**
 * The member names the kit's `get` reads, in order, for path text (a `@path`'s with its first `$.`
 * removed, as that directive does; a placeholder's as it is): `get` run over an object that notes each
 * name asked of it and answers with itself. Text naming the whole (`$.`) reads nothing, and so gives the
 * call.
 */
function membersRead(get: NonNullable<MappingKit['get']>, path: string): readonly string[] {
  const members: string[] = []
  const recorder: object = new Proxy(
    {},
    {
      get(_target, member) {
        members.push(String(member))
        return recorder
      },
    },
  )
  get(recorder, path)
  return members
}
