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
 * A mapping ready to run again: its top-level fields that are a constant or an `@path` of fixed text,
 * resolved here with the member names the kit's `get` reads for that text (worked out once); the other
 * fields (`@template`, `@if`, …) by one `transform` of them alone. Then, as `transform` does, the whole
 * is passed through the kit's `removeUndefined`. The `@path` text is split by the kit on every call,
 * with a regular expression: most of what a path costs.
 */
interface CompiledMapping {
  fields: (
    | { key: string; kind: 'constant'; value: unknown }
    | { key: string; kind: 'path'; members: readonly string[] }
    | { key: string; kind: 'kit' }
  )[]
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
    if (field.kind === 'constant') {
      body[field.key] = field.value
    } else if (field.kind === 'kit') {
      if (Object.hasOwn(fromKit!, field.key)) body[field.key] = fromKit![field.key]
    } else {
      // The kit's `get` over a list of member names: `reduce((object, key) => object && object[key], data)`.
      let value: unknown = call
      for (const member of field.members)
        value = value && (value as Record<string, unknown>)[member as keyof typeof value]
      if (value === undefined) continue
      // `removeUndefined` gives back anything but an object or array as it is.
      body[field.key] = typeof value === 'object' && value !== null ? removeUndefined!(value) : value
    }
  }
  return body
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
    const value = mapping[key]
    if (value === null || (typeof value !== 'object' && typeof value !== 'function')) {
      fields.push({ key, kind: 'constant', value })
      continue
    }
    const path = isJsonObject(value) && Object.keys(value).length === 1 ? value['@path'] : undefined
    if (typeof path === 'string') {
      fields.push({ key, kind: 'path', members: membersRead(get, path) })
      continue
    }
    fields.push({ key, kind: 'kit' })
    rest[key] = value
  }
  if (fields.every((field) => field.kind === 'kit')) return null
  return { fields, rest: Object.keys(rest).length === 0 ? null : rest }
}

/**
 * The member names the kit's `get` reads, in order, for `@path` text: as the `@path` directive does, its
 * first `$.` removed, then `get` run over an object that notes each name asked of it and answers with
 * itself. Text naming the whole (`$.`) reads nothing, and so gives the call.
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
  get(recorder, path.replace('$.', ''))
  return members
}
