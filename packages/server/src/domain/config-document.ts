/**
 * Configuration as code: the document that describes a Sluice's sources, destinations, computed traits
 * and audiences, keyed by name (docs/config-as-code.md). This module holds its terms and its canonical
 * form (what is compared, and, secrets masked, what is exported); config-reading.ts reads a document,
 * config-plan.ts turns it into changes and the writes that make them. All pure: no HTTP, no SQL.
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
import { isJsonObject } from '../lib/json-object.ts'
import { escapePointerToken } from '../lib/json-pointer.ts'
import type { Audience } from './audiences.ts'
import type { ComputedTrait } from './computed-traits.ts'
import type { ComputedTraitDefinition } from './config-store.ts'
import type { Destination, WebhooksSettings } from './destinations.ts'
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

export type Canonical = Record<string, unknown>

/** By name, sorted by name so two exports of the same state are the same text. */
export type Named = Map<string, Canonical>

function byName<T extends { name: string }>(records: T[], canonical: (record: T) => Canonical): Named {
  return new Map(
    records
      .slice()
      .sort((a, b) => compareNames(a.name, b.name))
      .map((record) => [record.name, canonical(record)]),
  )
}

export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function namesOf(ids: string[], names: ReadonlyMap<string, string>): string[] {
  return ids
    .map((id) => names.get(id))
    .filter((name) => name !== undefined)
    .sort(compareNames)
}

export function storedSettings(settings: WebhooksSettings, fields: SettingsFields): Canonical {
  const stored = settings as unknown as Record<string, unknown>
  const canonical: Canonical = {}
  for (const name of fields.names) {
    if (stored[name] !== undefined && stored[name] !== null) canonical[name] = stored[name]
  }
  return canonical
}

export function traitCanonical(
  trait: ComputedTraitDefinition & { key: string; enabled: boolean },
): Canonical {
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
export function canonicalOf(current: CurrentConfig, fields: SettingsFields): Record<ConfigSection, Named> {
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
export function secretMembers(section: ConfigSection, fields: SettingsFields): string[] {
  if (section === 'sources') return ['/writeKey']
  if (section === 'destinations') return fields.secrets.map((name) => `/settings/${name}`)
  return []
}

export function masked(
  section: ConfigSection,
  name: string,
  object: Canonical,
  fields: SettingsFields,
): Canonical {
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
