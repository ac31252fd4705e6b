/**
 * Configuration as code: the document that describes a Sluice's sources, destinations, computed traits
 * and audiences, keyed by name (docs/config-as-code.md). This module is pure: it turns the stored
 * records into the document (export), and a document plus the stored records into the changes that
 * would make them match (plan) with the writes that make them (apply, through the store). No HTTP, no SQL.
 *
 * Decisions:
 * - Objects are matched by name, exactly (names are trimmed when stored, so a name with surrounding
 *   whitespace is refused). Renaming in the document is a delete and a create.
 * - Every member the document leaves out means its default (not "keep"): the document is the whole
 *   truth about what it lists. Secrets are the exception: `{"$secret": …}` keeps the stored one.
 * - Objects the document does not list are left alone, unless `prune` is set: then they are deleted.
 * - A computed trait's or audience's `key` never changes; for a new one it may be given (so a copy
 *   keeps the keys its audience definitions refer to), else it is the snake_cased name.
 * - Sections are listed in `SECTIONS`. Alert settings, when Sluice has them, join as a section
 *   `alerts` (one object, not keyed by name) in the export, the plan and the schema.
 */
import { isDeepStrictEqual } from 'node:util'
import { isJsonObject } from '../lib/json-object.ts'
import { escapePointerToken } from '../lib/json-pointer.ts'
import { type Audience, type AudienceNode, checkDefinition } from './audiences.ts'
import { checkedTraitDefinition } from './computed-trait-service.ts'
import {
  COMPUTED_TRAIT_KINDS,
  type ComputedTrait,
  type ComputedTraitKind,
  snakeCase,
  type WhereCondition,
} from './computed-traits.ts'
import type { ComputedTraitDefinition, ConfigWrites, DestinationRef, SourceRef } from './config-store.ts'
import {
  DESTINATION_TYPES,
  type Destination,
  type DestinationType,
  type WebhooksSettings,
} from './destinations.ts'
import { ValidationError } from './errors.ts'
import { cleanName } from './names.ts'
import type { Source } from './sources.ts'

/** The document's format; a document of another version is refused. */
export const CONFIG_VERSION = 1

/**
 * The sections keyed by name, in the document's order. Alert settings are not here yet: when Sluice
 * has them, they are one object (not keyed by name), exported after these as `alerts`, planned with
 * `differences` like any object, and added to the document's schema (manage/config-schemas.ts).
 */
export const SECTIONS = ['sources', 'destinations', 'computedTraits', 'audiences'] as const
export type ConfigSection = (typeof SECTIONS)[number]

/** Stands for a secret that is not shown: on apply it keeps the stored one. */
export interface SecretPlaceholder {
  $secret: string
}

/** What Sluice has now. */
export interface CurrentConfig {
  sources: Source[]
  destinations: Destination[]
  computedTraits: ComputedTrait[]
  audiences: Audience[]
}

/**
 * The destination settings a document carries, from the destination settings' schema (so a setting
 * added there is exported and planned with no change here): every member, and those that are secrets.
 */
export interface SettingsFields {
  names: readonly string[]
  secrets: readonly string[]
}

/** Checks a destination's `settings` as the API does (`validateWebhooksSettings`). */
export type SettingsPolicy = (input: unknown) => WebhooksSettings

/** One difference: a member of an object (a JSON pointer inside it), before and after. */
export type FieldChange = {
  field: string
  from: unknown
  to: unknown
}

export type ConfigChange =
  | { action: 'create'; section: ConfigSection; name: string; value: Record<string, unknown> }
  | { action: 'update'; section: ConfigSection; name: string; fields: FieldChange[] }
  | { action: 'delete'; section: ConfigSection; name: string }

/** A problem in a document: where (a JSON pointer into it) and what. */
export interface DocumentProblem {
  field: string
  message: string
}

/** The document is invalid: every problem found, each with its pointer. Nothing is applied. */
export class InvalidDocumentError extends Error {
  readonly code = 'invalid_document'
  readonly problems: DocumentProblem[]

  constructor(problems: DocumentProblem[]) {
    super(
      `The configuration document has ${problems.length} problem${problems.length === 1 ? '' : 's'}: ` +
        problems.map((problem) => `${problem.field || '/'}: ${problem.message}`).join(' ') +
        ' Nothing was applied.',
    )
    this.name = 'InvalidDocumentError'
    this.problems = problems
  }
}

/** The placeholder of a secret member, e.g. `destinations/Orders/sharedSecret`. */
export function secretPath(section: ConfigSection, name: string, member: string): string {
  return `${section}/${escapePointerToken(name)}/${member}`
}

// --- the canonical form: what is compared, and (secrets masked) what is exported ---

type Canonical = Record<string, unknown>

/** By name, sorted by name so two exports of the same state are the same text. */
type Named = Map<string, Canonical>

function byName<T extends { name: string }>(records: T[], canonical: (record: T) => Canonical): Named {
  return new Map(
    records
      .slice()
      .sort((a, b) => compareNames(a.name, b.name))
      .map((record) => [record.name, canonical(record)]),
  )
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function namesOf(ids: string[], names: ReadonlyMap<string, string>): string[] {
  return ids
    .map((id) => names.get(id))
    .filter((name) => name !== undefined)
    .sort(compareNames)
}

function storedSettings(settings: WebhooksSettings, fields: SettingsFields): Canonical {
  const stored = settings as unknown as Record<string, unknown>
  const canonical: Canonical = {}
  for (const name of fields.names) {
    if (stored[name] !== undefined && stored[name] !== null) canonical[name] = stored[name]
  }
  return canonical
}

function traitCanonical(trait: ComputedTraitDefinition & { key: string; enabled: boolean }): Canonical {
  return {
    key: trait.key,
    enabled: trait.enabled,
    kind: trait.kind,
    event: trait.event,
    ...(trait.property === null ? {} : { property: trait.property }),
    where: trait.where,
    ...(trait.withinDays === null ? {} : { withinDays: trait.withinDays }),
  }
}

/** The stored configuration in canonical form, secrets included, every section sorted by name. */
function canonicalOf(current: CurrentConfig, fields: SettingsFields): Record<ConfigSection, Named> {
  const sourceNames = new Map(current.sources.map((source) => [source.id, source.name]))
  const destinationNames = new Map(current.destinations.map((item) => [item.id, item.name]))
  return {
    sources: byName(current.sources, (source) => ({ enabled: source.enabled, writeKey: source.writeKey })),
    destinations: byName(current.destinations, (destination) => ({
      type: destination.type,
      enabled: destination.enabled,
      sources: namesOf(destination.sourceIds, sourceNames),
      settings: storedSettings(destination.settings, fields),
    })),
    computedTraits: byName(current.computedTraits, (trait) => ({
      ...traitCanonical({ ...trait, enabled: trait.status !== 'disabled' }),
      destinations: namesOf(trait.destinationIds, destinationNames),
    })),
    audiences: byName(current.audiences, (audience) => ({
      key: audience.key,
      enabled: audience.status !== 'disabled',
      definition: audience.definition,
      includeAnonymous: audience.includeAnonymous,
      destinations: namesOf(audience.destinationIds, destinationNames),
    })),
  }
}

/** The members of an object that are secrets, as pointers inside it. */
function secretMembers(section: ConfigSection, fields: SettingsFields): string[] {
  if (section === 'sources') return ['/writeKey']
  if (section === 'destinations') return fields.secrets.map((name) => `/settings/${name}`)
  return []
}

function masked(section: ConfigSection, name: string, object: Canonical, fields: SettingsFields): Canonical {
  const copy = structuredClone(object)
  for (const pointer of secretMembers(section, fields)) {
    const [parent, member] = parentOf(copy, pointer)
    if (parent?.[member] !== undefined) parent[member] = { $secret: secretPath(section, name, member) }
  }
  return copy
}

/** The object holding a pointer's last member (pointers here are at most two deep), and that member. */
function parentOf(object: Canonical, pointer: string): [Record<string, unknown> | undefined, string] {
  const parts = pointer.split('/').slice(1)
  const member = parts.pop()!
  let parent: unknown = object
  for (const part of parts) parent = isJsonObject(parent) ? parent[part] : undefined
  return [isJsonObject(parent) ? parent : undefined, member]
}

/** The configuration document of what Sluice has now: sections and names sorted, secrets as placeholders unless `secrets`. */
export function exportConfig(
  current: CurrentConfig,
  fields: SettingsFields,
  options: { secrets: boolean },
): Record<string, unknown> {
  const canonical = canonicalOf(current, fields)
  const document: Record<string, unknown> = { version: CONFIG_VERSION }
  for (const section of SECTIONS) {
    const objects: Record<string, unknown> = {}
    for (const [name, object] of canonical[section]) {
      objects[name] = options.secrets ? object : masked(section, name, object, fields)
    }
    document[section] = objects
  }
  return document
}

// --- reading a document ---

/** Collects problems; `check` runs a rule and records its ValidationError under `at` instead of throwing. */
class Problems {
  readonly list: DocumentProblem[] = []

  add(field: string, message: string): void {
    this.list.push({ field, message })
  }

  check<T>(at: string, rule: () => T): T | undefined {
    try {
      return rule()
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error
      this.add(at + error.field, error.message)
      return undefined
    }
  }
}

const DOCUMENT_MEMBERS = ['version', 'prune', '$schema', ...SECTIONS]
const SOURCE_MEMBERS = ['enabled', 'writeKey']
const DESTINATION_MEMBERS = ['type', 'enabled', 'sources', 'settings']
const TRAIT_MEMBERS = ['key', 'enabled', 'kind', 'event', 'property', 'where', 'withinDays', 'destinations']
const AUDIENCE_MEMBERS = ['key', 'enabled', 'definition', 'includeAnonymous', 'destinations']

/** The longest write key accepted, and the shortest (Sluice's own are 43 characters). */
const WRITE_KEY_LENGTH = { min: 16, max: 256 }

function unknownMembers(object: Record<string, unknown>, allowed: string[], at: string, problems: Problems) {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) {
      problems.add(
        `${at}/${escapePointerToken(key)}`,
        `Unknown member "${key}"; allowed: ${allowed.join(', ')}.`,
      )
    }
  }
}

function optionalBoolean(value: unknown, fallback: boolean, at: string, problems: Problems): boolean {
  if (value === undefined) return fallback
  if (typeof value !== 'boolean') problems.add(at, 'Must be true or false.')
  return value === true
}

/** A list of names of objects in `known` (sorted, without repeats), or problems. */
function nameList(
  value: unknown,
  known: ReadonlySet<string>,
  what: string,
  at: string,
  problems: Problems,
): string[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) {
    problems.add(at, `Must be a list of ${what} names, e.g. ["Web app"].`)
    return []
  }
  value.forEach((name, index) => {
    if (typeof name !== 'string' || !known.has(name)) {
      problems.add(
        `${at}/${index}`,
        `${JSON.stringify(name)} names no ${what} in the document or kept in Sluice; use the name of one (names are matched exactly).`,
      )
    }
  })
  return [...new Set(value.filter((name): name is string => typeof name === 'string'))].sort(compareNames)
}

/** What the document asks for, per section and name, in canonical form (secrets resolved), and its options. */
interface Desired {
  prune: boolean
  sections: Record<ConfigSection, Named>
}

/**
 * The secret a member ends up with: a placeholder keeps the stored one (none for a new object: a
 * problem, except a write key, which Sluice generates), `$env` must have been resolved by the CLI.
 */
function secretValue(
  value: unknown,
  stored: unknown,
  at: string,
  problems: Problems,
  options: { generated: boolean },
): unknown {
  if (!isJsonObject(value)) return value
  const keys = Object.keys(value)
  if (keys.length === 1 && typeof value.$secret === 'string') {
    if (stored === undefined && !options.generated) {
      problems.add(
        at,
        'This placeholder keeps the secret Sluice has, but Sluice has none for this object: give the secret itself, or {"$env": "NAME"} with the sluice CLI.',
      )
    }
    return stored
  }
  if (keys.length === 1 && typeof value.$env === 'string') {
    problems.add(
      at,
      `{"$env": ${JSON.stringify(value.$env)}} is read from the environment by the sluice CLI (sluice config plan|apply FILE), which sends the value; the server does not read it. Use the CLI, or give the value.`,
    )
    return stored
  }
  problems.add(
    at,
    'A secret is a string, {"$secret": "…"} (keep the one Sluice has) or {"$env": "NAME"} (CLI only).',
  )
  return stored
}

function readDocument(
  input: unknown,
  stored: Record<ConfigSection, Named>,
  fields: SettingsFields,
  settingsPolicy: SettingsPolicy,
): Desired {
  const problems = new Problems()
  if (!isJsonObject(input)) {
    throw new InvalidDocumentError([
      {
        field: '',
        message: `A configuration document is an object such as {"version": ${CONFIG_VERSION}, "sources": {}}.`,
      },
    ])
  }
  unknownMembers(input, DOCUMENT_MEMBERS, '', problems)
  if (input.version !== CONFIG_VERSION) {
    problems.add(
      '/version',
      `Must be ${CONFIG_VERSION}, the only version of the configuration document so far.`,
    )
  }
  const prune = optionalBoolean(input.prune, false, '/prune', problems)

  const given = {} as Record<ConfigSection, Record<string, unknown>>
  for (const section of SECTIONS) {
    const value = input[section] ?? {}
    if (!isJsonObject(value)) {
      problems.add(`/${section}`, `Must be an object keyed by name, e.g. {"Web app": {…}}; {} for none.`)
      given[section] = {}
    } else given[section] = value
    for (const name of Object.keys(given[section])) {
      const field = `/${section}/${escapePointerToken(name)}`
      const cleaned = problems.check(field, () => cleanName(name, ''))
      if (cleaned !== undefined && cleaned !== name) {
        problems.add(
          field,
          `The name ${JSON.stringify(name)} has surrounding whitespace; names are stored trimmed: write ${JSON.stringify(cleaned)}.`,
        )
      }
    }
  }
  // Names that exist once applied: those given, and (without prune) those Sluice keeps.
  const kept = (section: ConfigSection) =>
    new Set([...Object.keys(given[section]), ...(prune ? [] : stored[section].keys())])
  const sourceNames = kept('sources')
  const destinationNames = kept('destinations')

  const sections = {
    sources: new Map(),
    destinations: new Map(),
    computedTraits: new Map(),
    audiences: new Map(),
  } as Record<ConfigSection, Named>

  for (const [name, value] of Object.entries(given.sources)) {
    const at = `/sources/${escapePointerToken(name)}`
    if (!isJsonObject(value)) {
      problems.add(at, 'A source is an object such as {"enabled": true}.')
      continue
    }
    unknownMembers(value, SOURCE_MEMBERS, at, problems)
    const current = stored.sources.get(name)
    const writeKey =
      value.writeKey === undefined
        ? current?.writeKey
        : secretValue(value.writeKey, current?.writeKey, `${at}/writeKey`, problems, { generated: true })
    if (typeof value.writeKey === 'string' && !/^[\x21-\x7e]+$/.test(value.writeKey)) {
      problems.add(`${at}/writeKey`, 'A write key is printable ASCII without spaces.')
    } else if (
      typeof value.writeKey === 'string' &&
      (value.writeKey.length < WRITE_KEY_LENGTH.min || value.writeKey.length > WRITE_KEY_LENGTH.max)
    ) {
      problems.add(
        `${at}/writeKey`,
        `A write key has ${WRITE_KEY_LENGTH.min} to ${WRITE_KEY_LENGTH.max} characters; leave it out to keep the current one (or have one generated).`,
      )
    }
    sections.sources.set(name, {
      enabled: optionalBoolean(value.enabled, true, `${at}/enabled`, problems),
      ...(writeKey === undefined ? {} : { writeKey }),
    })
  }

  for (const [name, value] of Object.entries(given.destinations)) {
    const at = `/destinations/${escapePointerToken(name)}`
    if (!isJsonObject(value)) {
      problems.add(
        at,
        'A destination is an object such as {"type": "webhooks", "sources": ["Web app"], "settings": {"webhooks": [{"url": "https://example.com/hooks"}]}}.',
      )
      continue
    }
    unknownMembers(value, DESTINATION_MEMBERS, at, problems)
    const current = stored.destinations.get(name)
    const type = value.type ?? 'webhooks'
    if (!DESTINATION_TYPES.includes(type as DestinationType)) {
      problems.add(`${at}/type`, `Must be one of: ${DESTINATION_TYPES.join(', ')}.`)
    } else if (current !== undefined && current.type !== type) {
      problems.add(
        `${at}/type`,
        `A destination's type cannot change (it is ${JSON.stringify(current.type)}); give the new one another name.`,
      )
    }
    let settings: Canonical = {}
    if (!isJsonObject(value.settings)) {
      problems.add(
        `${at}/settings`,
        'Required: an object such as {"webhooks": [{"url": "https://example.com/hooks"}]}.',
      )
    } else {
      const input = { ...value.settings }
      const currentSettings = (current?.settings ?? {}) as Canonical
      for (const secret of fields.secrets) {
        if (input[secret] !== undefined && input[secret] !== null) {
          input[secret] = secretValue(
            input[secret],
            currentSettings[secret],
            `${at}/settings/${secret}`,
            problems,
            {
              generated: false,
            },
          )
        }
      }
      const checked = problems.check(at, () => settingsPolicy(input))
      if (checked) settings = storedSettings(checked, fields)
    }
    sections.destinations.set(name, {
      type,
      enabled: optionalBoolean(value.enabled, true, `${at}/enabled`, problems),
      sources: nameList(value.sources, sourceNames, 'source', `${at}/sources`, problems),
      settings,
    })
  }

  // Keys of the computations once applied: every key must be unique, and definitions refer to them.
  const keyOf = (section: 'computedTraits' | 'audiences', name: string, value: unknown): string => {
    const storedKey = stored[section].get(name)?.key as string | undefined
    const givenKey = isJsonObject(value) ? value.key : undefined
    // An existing object keeps its key (a different one given is a problem of its own).
    return storedKey ?? (typeof givenKey === 'string' ? givenKey : snakeCase(name))
  }
  const computationKeys = new Map<string, string>() // key → pointer of its object
  const audienceDefinitions = new Map<string, AudienceNode>()
  const traitKeys = new Set<string>()
  for (const section of ['computedTraits', 'audiences'] as const) {
    const names = kept(section)
    for (const name of names) {
      const value = given[section][name]
      const key =
        value === undefined ? (stored[section].get(name)!.key as string) : keyOf(section, name, value)
      const at = `/${section}/${escapePointerToken(name)}`
      const storedKey = stored[section].get(name)?.key
      if (isJsonObject(value) && value.key !== undefined) {
        if (typeof value.key !== 'string' || !/^[a-z0-9]+(_[a-z0-9]+)*$/.test(value.key)) {
          problems.add(
            `${at}/key`,
            'A key is snake_case: lower-case letters and digits joined by single underscores, e.g. "orders_last_30_days".',
          )
        } else if (storedKey !== undefined && storedKey !== value.key) {
          problems.add(
            `${at}/key`,
            `The key of "${name}" is ${JSON.stringify(storedKey)} and never changes; leave "key" out, or give the new key to an object with another name.`,
          )
        }
      }
      if (key === '')
        problems.add(
          `${at}`,
          'The name needs at least one letter or digit: it becomes the key (or give "key").',
        )
      const earlier = computationKeys.get(key)
      if (earlier !== undefined && key !== '') {
        problems.add(
          value === undefined ? earlier : at,
          `The key ${JSON.stringify(key)} is also the key of ${earlier}; keys of computed traits and audiences are unique.`,
        )
      }
      computationKeys.set(key, at)
      if (section === 'computedTraits') traitKeys.add(key)
      else {
        const definition =
          value === undefined
            ? stored.audiences.get(name)!.definition
            : isJsonObject(value)
              ? value.definition
              : undefined
        if (definition !== undefined) audienceDefinitions.set(key, definition as AudienceNode)
      }
    }
  }

  for (const [name, value] of Object.entries(given.computedTraits)) {
    const at = `/computedTraits/${escapePointerToken(name)}`
    if (!isJsonObject(value)) {
      problems.add(at, 'A computed trait is an object such as {"kind": "count", "event": "Order Completed"}.')
      continue
    }
    unknownMembers(value, TRAIT_MEMBERS, at, problems)
    const { kind, event, property, where, withinDays } = value
    let definition: ComputedTraitDefinition | undefined
    if (!COMPUTED_TRAIT_KINDS.includes(kind as ComputedTraitKind)) {
      problems.add(`${at}/kind`, `Required: one of ${COMPUTED_TRAIT_KINDS.join(', ')}.`)
    } else if (typeof event !== 'string' || event === '') {
      problems.add(`${at}/event`, 'Required: the track event the calls must have, e.g. "Order Completed".')
    } else if (property !== undefined && (typeof property !== 'string' || property === '')) {
      problems.add(
        `${at}/property`,
        'Must be a call property, e.g. "total" (a dotted path reads nested ones).',
      )
    } else if (where !== undefined && !(Array.isArray(where) && where.every(isJsonObject))) {
      problems.add(
        `${at}/where`,
        'Must be a list of conditions such as {"property": "total", "op": ">", "value": 10}.',
      )
    } else if (withinDays !== undefined && !Number.isInteger(withinDays)) {
      problems.add(`${at}/withinDays`, 'Must be a whole number of days.')
    } else {
      definition = problems.check(at, () =>
        checkedTraitDefinition({
          kind: kind as ComputedTraitKind,
          event,
          ...(property === undefined ? {} : { property: property as string }),
          ...(where === undefined ? {} : { where: where as unknown as WhereCondition[] }),
          ...(withinDays === undefined ? {} : { withinDays: withinDays as number }),
        }),
      )
    }
    sections.computedTraits.set(name, {
      ...traitCanonical({
        ...(definition ?? { kind: 'count', event: '', property: null, where: [], withinDays: null }),
        key: keyOf('computedTraits', name, value),
        enabled: optionalBoolean(value.enabled, true, `${at}/enabled`, problems),
      }),
      destinations: nameList(
        value.destinations,
        destinationNames,
        'destination',
        `${at}/destinations`,
        problems,
      ),
    })
  }

  for (const [name, value] of Object.entries(given.audiences)) {
    const at = `/audiences/${escapePointerToken(name)}`
    if (!isJsonObject(value)) {
      problems.add(at, 'An audience is an object such as {"definition": {"event": "Order Completed"}}.')
      continue
    }
    unknownMembers(value, AUDIENCE_MEMBERS, at, problems)
    const key = keyOf('audiences', name, value)
    const others = new Map([...audienceDefinitions].filter(([other]) => other !== key))
    const definition = problems.check('', () =>
      checkDefinition(
        value.definition,
        { computedTraitKeys: traitKeys, audiences: others, ownKey: key },
        `${at}/definition`,
      ),
    )
    sections.audiences.set(name, {
      key,
      enabled: optionalBoolean(value.enabled, true, `${at}/enabled`, problems),
      definition: definition ?? null,
      includeAnonymous: optionalBoolean(value.includeAnonymous, false, `${at}/includeAnonymous`, problems),
      destinations: nameList(
        value.destinations,
        destinationNames,
        'destination',
        `${at}/destinations`,
        problems,
      ),
    })
  }

  // Write keys are unique across sources.
  const writeKeys = new Map<string, string>()
  for (const name of sourceNames) {
    const writeKey = (sections.sources.get(name) ?? stored.sources.get(name))?.writeKey
    if (typeof writeKey !== 'string') continue
    const other = writeKeys.get(writeKey)
    if (other !== undefined) {
      problems.add(
        `/sources/${escapePointerToken(name)}/writeKey`,
        `The same write key as source "${other}"; each source has its own.`,
      )
    }
    writeKeys.set(writeKey, name)
  }

  if (problems.list.length > 0) throw new InvalidDocumentError(problems.list)
  return { prune, sections }
}

// --- the plan ---

/** The members that differ between two canonical objects: top level, and one level into `settings`. */
function differences(from: Canonical, to: Canonical): FieldChange[] {
  const changes: FieldChange[] = []
  for (const member of new Set([...Object.keys(from), ...Object.keys(to)])) {
    if (member === 'settings' && isJsonObject(from.settings) && isJsonObject(to.settings)) {
      for (const setting of new Set([...Object.keys(from.settings), ...Object.keys(to.settings)])) {
        if (!isDeepStrictEqual(from.settings[setting], to.settings[setting])) {
          changes.push({
            field: `/settings/${setting}`,
            from: from.settings[setting] ?? null,
            to: to.settings[setting] ?? null,
          })
        }
      }
    } else if (!isDeepStrictEqual(from[member], to[member])) {
      changes.push({ field: `/${member}`, from: from[member] ?? null, to: to[member] ?? null })
    }
  }
  return changes
}

/** A change as shown: secrets as placeholders. */
function shownChange(
  change: FieldChange,
  section: ConfigSection,
  name: string,
  fields: SettingsFields,
): FieldChange {
  if (!secretMembers(section, fields).includes(change.field)) return change
  const placeholder = (value: unknown) =>
    value === null ? null : { $secret: secretPath(section, name, change.field.split('/').pop()!) }
  return { field: change.field, from: placeholder(change.from), to: placeholder(change.to) }
}

/** The changes a document would make, in document order (sections, then names), and the writes that make them. */
export function planConfig(
  current: CurrentConfig,
  document: unknown,
  fields: SettingsFields,
  settingsPolicy: SettingsPolicy,
): { changes: ConfigChange[]; writes: ConfigWrites } {
  const stored = canonicalOf(current, fields)
  const desired = readDocument(document, stored, fields, settingsPolicy)
  const ids = {
    sources: new Map(current.sources.map((item) => [item.name, item.id])),
    destinations: new Map(current.destinations.map((item) => [item.name, item.id])),
    computedTraits: new Map(current.computedTraits.map((item) => [item.name, item.id])),
    audiences: new Map(current.audiences.map((item) => [item.name, item.id])),
  }
  // A name refers to the source Sluice has under it (kept: a pruned one cannot be referred to), else to one created.
  const sourceRef = (name: string): SourceRef => {
    const id = ids.sources.get(name)
    return id === undefined ? { created: name } : { id }
  }
  const destinationRef = (name: string): DestinationRef => {
    const id = ids.destinations.get(name)
    return id === undefined ? { created: name } : { id }
  }

  const changes: ConfigChange[] = []
  const writes: ConfigWrites = {
    sources: { create: [], update: [], delete: [] },
    destinations: { create: [], update: [], delete: [] },
    computedTraits: { create: [], update: [], delete: [] },
    audiences: { create: [], update: [], delete: [] },
  }
  for (const section of SECTIONS) {
    const wanted = desired.sections[section]
    const names = [...new Set([...wanted.keys(), ...stored[section].keys()])].sort(compareNames)
    for (const name of names) {
      const before = stored[section].get(name)
      const after = wanted.get(name)
      if (after === undefined) {
        if (!desired.prune || before === undefined) continue
        changes.push({ action: 'delete', section, name })
        writes[section].delete.push(ids[section].get(name)!)
      } else if (before === undefined) {
        changes.push({ action: 'create', section, name, value: masked(section, name, after, fields) })
        addCreate(writes, section, name, after, sourceRef, destinationRef)
      } else {
        const fieldChanges = differences(before, after)
        if (fieldChanges.length === 0) continue
        changes.push({
          action: 'update',
          section,
          name,
          fields: fieldChanges.map((change) => shownChange(change, section, name, fields)),
        })
        addUpdate(writes, section, ids[section].get(name)!, fieldChanges, after, sourceRef, destinationRef)
      }
    }
  }
  return { changes, writes }
}

function addCreate(
  writes: ConfigWrites,
  section: ConfigSection,
  name: string,
  object: Canonical,
  sourceRef: (name: string) => SourceRef,
  destinationRef: (name: string) => DestinationRef,
): void {
  const destinations = () => (object.destinations as string[]).map(destinationRef)
  if (section === 'sources') {
    writes.sources.create.push({
      name,
      enabled: object.enabled as boolean,
      writeKey: (object.writeKey as string | undefined) ?? null,
    })
  } else if (section === 'destinations') {
    writes.destinations.create.push({
      name,
      type: object.type as DestinationType,
      enabled: object.enabled as boolean,
      sources: (object.sources as string[]).map(sourceRef),
      settings: object.settings as unknown as WebhooksSettings,
    })
  } else if (section === 'computedTraits') {
    writes.computedTraits.create.push({
      name,
      key: object.key as string,
      enabled: object.enabled as boolean,
      definition: traitDefinition(object),
      destinations: destinations(),
    })
  } else {
    writes.audiences.create.push({
      name,
      key: object.key as string,
      enabled: object.enabled as boolean,
      definition: object.definition as AudienceNode,
      includeAnonymous: object.includeAnonymous as boolean,
      destinations: destinations(),
    })
  }
}

function addUpdate(
  writes: ConfigWrites,
  section: ConfigSection,
  id: string,
  changes: FieldChange[],
  object: Canonical,
  sourceRef: (name: string) => SourceRef,
  destinationRef: (name: string) => DestinationRef,
): void {
  const changed = (field: string) =>
    changes.some((change) => change.field === field || change.field.startsWith(`${field}/`))
  const enabled = changed('/enabled') ? { enabled: object.enabled as boolean } : {}
  const destinations = changed('/destinations')
    ? { destinations: (object.destinations as string[]).map(destinationRef) }
    : {}
  if (section === 'sources') {
    writes.sources.update.push({
      id,
      ...enabled,
      ...(changed('/writeKey') ? { writeKey: object.writeKey as string } : {}),
    })
  } else if (section === 'destinations') {
    writes.destinations.update.push({
      id,
      ...enabled,
      ...(changed('/sources') ? { sources: (object.sources as string[]).map(sourceRef) } : {}),
      ...(changed('/settings') ? { settings: object.settings as unknown as WebhooksSettings } : {}),
    })
  } else if (section === 'computedTraits') {
    const definitionChanged = ['/kind', '/event', '/property', '/where', '/withinDays'].some(changed)
    writes.computedTraits.update.push({
      id,
      ...enabled,
      ...destinations,
      ...(definitionChanged ? { definition: traitDefinition(object) } : {}),
    })
  } else {
    writes.audiences.update.push({
      id,
      ...enabled,
      ...destinations,
      ...(changed('/definition') ? { definition: object.definition as AudienceNode } : {}),
      ...(changed('/includeAnonymous') ? { includeAnonymous: object.includeAnonymous as boolean } : {}),
    })
  }
}

function traitDefinition(object: Canonical): ComputedTraitDefinition {
  return {
    kind: object.kind as ComputedTraitKind,
    event: object.event as string,
    property: (object.property as string | undefined) ?? null,
    where: object.where as WhereCondition[],
    withinDays: (object.withinDays as number | undefined) ?? null,
  }
}
