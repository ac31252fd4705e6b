/**
 * Reading a configuration document (config-document.ts): every object checked with the rules the API
 * applies to it, references and keys resolved against what Sluice has and what it keeps, secrets
 * resolved (a placeholder keeps the stored one). Every problem found is collected, each with the JSON
 * pointer of its place in the document, and refused together.
 */
import { isJsonObject } from '../lib/json-object.ts'
import { escapePointerToken } from '../lib/json-pointer.ts'
import { type AudienceNode, checkDefinition } from './audiences.ts'
import { checkedTraitDefinition } from './computed-trait-service.ts'
import {
  COMPUTED_TRAIT_KINDS,
  type ComputedTraitKind,
  snakeCase,
  type WhereCondition,
} from './computed-traits.ts'
import {
  type Canonical,
  CONFIG_VERSION,
  type ConfigSection,
  compareNames,
  type DocumentProblem,
  InvalidDocumentError,
  type Named,
  SECTIONS,
  type SettingsFields,
  type SettingsPolicy,
  storedSettings,
  traitCanonical,
} from './config-document.ts'
import type { ComputedTraitDefinition } from './config-store.ts'
import { DESTINATION_TYPES, type DestinationType, type WebhooksSettings } from './destinations.ts'
import { ValidationError } from './errors.ts'
import { cleanName } from './names.ts'
import { SECRETS_SLUICE_MAKES } from './webhook-settings.ts'

/** What the document asks for, per section and name, in canonical form (secrets resolved), and its options. */
export interface Desired {
  prune: boolean
  sections: Record<ConfigSection, Named>
  /** Each destination's settings as its policy returned them (every member, nulls too): what is written. */
  destinationSettings: ReadonlyMap<string, WebhooksSettings>
}

const DOCUMENT_MEMBERS = ['version', 'prune', '$schema', ...SECTIONS]
const SOURCE_MEMBERS = ['enabled', 'writeKey']
const DESTINATION_MEMBERS = ['type', 'enabled', 'sources', 'settings']
const TRAIT_MEMBERS = ['key', 'enabled', 'kind', 'event', 'property', 'where', 'withinDays', 'destinations']
const AUDIENCE_MEMBERS = ['key', 'enabled', 'definition', 'includeAnonymous', 'destinations']

/** The shortest and longest write key accepted (Sluice's own are 43 characters). */
const WRITE_KEY_LENGTH = { min: 16, max: 256 }
const KEY_PATTERN = /^[a-z0-9]+(_[a-z0-9]+)*$/

type Computations = 'computedTraits' | 'audiences'

/**
 * Reads `input` against what Sluice has (`stored`, canonical). Throws `InvalidDocumentError` with
 * every problem found.
 */
export function readDocument(
  input: unknown,
  stored: Record<ConfigSection, Named>,
  fields: SettingsFields,
  settingsPolicy: SettingsPolicy,
): Desired {
  return new DocumentReader(stored, fields, settingsPolicy).read(input)
}

/** One document's reading: the problems found so far, and what the sections refer to. */
class DocumentReader {
  readonly #stored: Record<ConfigSection, Named>
  readonly #fields: SettingsFields
  readonly #settingsPolicy: SettingsPolicy
  readonly #problems: DocumentProblem[] = []
  readonly #destinationSettings = new Map<string, WebhooksSettings>()

  constructor(stored: Record<ConfigSection, Named>, fields: SettingsFields, settingsPolicy: SettingsPolicy) {
    this.#stored = stored
    this.#fields = fields
    this.#settingsPolicy = settingsPolicy
  }

  read(input: unknown): Desired {
    if (!isJsonObject(input)) {
      throw new InvalidDocumentError([
        {
          field: '',
          message: `A configuration document is an object such as {"version": ${CONFIG_VERSION}, "sources": {}}.`,
        },
      ])
    }
    this.#unknownMembers(input, DOCUMENT_MEMBERS, '')
    if (input.version !== CONFIG_VERSION) {
      this.#add(
        '/version',
        `Must be ${CONFIG_VERSION}, the only version of the configuration document so far.`,
      )
    }
    const prune = this.#boolean(input.prune, false, '/prune')
    const given = Object.fromEntries(
      SECTIONS.map((section) => [section, this.#section(input, section)]),
    ) as Record<ConfigSection, Record<string, unknown>>
    // Names that exist once applied: those given, and (without prune) those Sluice keeps.
    const kept = (section: ConfigSection) =>
      new Set([...Object.keys(given[section]), ...(prune ? [] : this.#stored[section].keys())])

    const sources = this.#objects(given.sources, 'sources', SOURCE_MEMBERS, (name, value, at) =>
      this.#source(name, value, at),
    )
    const sourceNames = kept('sources')
    this.#uniqueWriteKeys(sourceNames, sources)
    const destinationNames = kept('destinations')
    const destinations = this.#objects(
      given.destinations,
      'destinations',
      DESTINATION_MEMBERS,
      (name, value, at) => this.#destination(name, value, at, sourceNames),
    )
    const keys = this.#computationKeys(given, kept)
    const computedTraits = this.#objects(
      given.computedTraits,
      'computedTraits',
      TRAIT_MEMBERS,
      (name, value, at) => ({
        ...this.#trait(value, at, this.#keyOf('computedTraits', name, value)),
        destinations: this.#names(value.destinations, destinationNames, 'destination', `${at}/destinations`),
      }),
    )
    const audiences = this.#objects(given.audiences, 'audiences', AUDIENCE_MEMBERS, (name, value, at) => ({
      ...this.#audience(value, at, this.#keyOf('audiences', name, value), keys),
      destinations: this.#names(value.destinations, destinationNames, 'destination', `${at}/destinations`),
    }))

    if (this.#problems.length > 0) throw new InvalidDocumentError(this.#problems)
    return {
      prune,
      sections: { sources, destinations, computedTraits, audiences },
      destinationSettings: this.#destinationSettings,
    }
  }

  /** A section's objects by name (`{}` when left out); each name checked as names are when stored. */
  #section(input: Record<string, unknown>, section: ConfigSection): Record<string, unknown> {
    const value = input[section] ?? {}
    if (!isJsonObject(value)) {
      this.#add(`/${section}`, 'Must be an object keyed by name, e.g. {"Web app": {…}}; {} for none.')
      return {}
    }
    for (const name of Object.keys(value)) {
      const field = `/${section}/${escapePointerToken(name)}`
      const cleaned = this.#check(field, () => cleanName(name, ''))
      if (cleaned !== undefined && cleaned !== name) {
        this.#add(
          field,
          `The name ${JSON.stringify(name)} has surrounding whitespace; names are stored trimmed: write ${JSON.stringify(cleaned)}.`,
        )
      }
    }
    return value
  }

  /** Each object of a section read by `read`, in canonical form; one that is not an object is a problem. */
  #objects(
    given: Record<string, unknown>,
    section: ConfigSection,
    members: string[],
    read: (name: string, value: Record<string, unknown>, at: string) => Canonical,
  ): Named {
    const objects: Named = new Map()
    for (const [name, value] of Object.entries(given)) {
      const at = `/${section}/${escapePointerToken(name)}`
      if (!isJsonObject(value)) {
        this.#add(at, `Must be an object with some of: ${members.join(', ')}.`)
        continue
      }
      this.#unknownMembers(value, members, at)
      objects.set(name, read(name, value, at))
    }
    return objects
  }

  #source(name: string, value: Record<string, unknown>, at: string): Canonical {
    const current = this.#stored.sources.get(name)?.writeKey
    const given = value.writeKey
    if (typeof given === 'string' && !/^[\x21-\x7e]+$/.test(given)) {
      this.#add(`${at}/writeKey`, 'A write key is printable ASCII without spaces.')
    } else if (
      typeof given === 'string' &&
      (given.length < WRITE_KEY_LENGTH.min || given.length > WRITE_KEY_LENGTH.max)
    ) {
      this.#add(
        `${at}/writeKey`,
        `A write key has ${WRITE_KEY_LENGTH.min} to ${WRITE_KEY_LENGTH.max} characters; leave it out to keep the current one (or have one generated).`,
      )
    }
    // Left out, a write key is kept (a new source gets a generated one).
    const writeKey =
      given === undefined ? current : this.#secret(given, current, `${at}/writeKey`, { generated: true })
    return {
      enabled: this.#boolean(value.enabled, true, `${at}/enabled`),
      ...(writeKey === undefined ? {} : { writeKey }),
    }
  }

  #destination(
    name: string,
    value: Record<string, unknown>,
    at: string,
    sourceNames: ReadonlySet<string>,
  ): Canonical {
    const current = this.#stored.destinations.get(name)
    const type = value.type ?? 'webhooks'
    if (!DESTINATION_TYPES.includes(type as DestinationType)) {
      this.#add(`${at}/type`, `Must be one of: ${DESTINATION_TYPES.join(', ')}.`)
    } else if (current !== undefined && current.type !== type) {
      this.#add(
        `${at}/type`,
        `A destination's type cannot change (it is ${JSON.stringify(current.type)}); give the new one another name.`,
      )
    }
    const settings = this.#settings(name, value.settings, (current?.settings ?? {}) as Canonical, at)
    return {
      type,
      enabled: this.#boolean(value.enabled, true, `${at}/enabled`),
      sources: this.#names(value.sources, sourceNames, 'source', `${at}/sources`),
      settings,
    }
  }

  /** Settings checked by the destination's own policy, each secret placeholder replaced by the stored secret. */
  #settings(name: string, value: unknown, current: Canonical, at: string): Canonical {
    if (!isJsonObject(value)) {
      this.#add(
        `${at}/settings`,
        'Required: an object such as {"webhooks": [{"url": "https://example.com/hooks"}]}.',
      )
      return {}
    }
    const input = { ...value }
    for (const secret of this.#fields.secrets) {
      // Left out, a secret Sluice makes is kept, as a write key is (so applying an export plans nothing).
      if (input[secret] === undefined && SECRETS_SLUICE_MAKES.includes(secret))
        input[secret] = current[secret]
      if (input[secret] === undefined || input[secret] === null) continue
      input[secret] = this.#secret(input[secret], current[secret], `${at}/settings/${secret}`, {
        generated: false,
      })
    }
    const checked = this.#check(at, () => this.#settingsPolicy(input))
    if (!checked) return {}
    this.#destinationSettings.set(name, checked)
    return storedSettings(checked, this.#fields)
  }

  /**
   * The key of each computed trait and audience once applied (given, kept, or derived from the name),
   * checked: snake_case, never changed, unique across both kinds. Answers what definitions refer to.
   */
  #computationKeys(
    given: Record<ConfigSection, Record<string, unknown>>,
    kept: (section: ConfigSection) => Set<string>,
  ): { traitKeys: Set<string>; audienceDefinitions: Map<string, AudienceNode> } {
    const owners = new Map<string, string>() // key → pointer of its object
    const traitKeys = new Set<string>()
    const audienceDefinitions = new Map<string, AudienceNode>()
    for (const section of ['computedTraits', 'audiences'] as const) {
      for (const name of kept(section)) {
        const value = given[section][name]
        const at = `/${section}/${escapePointerToken(name)}`
        const key = this.#keyOf(section, name, value)
        this.#checkGivenKey(section, name, value, at)
        if (key === '') {
          this.#add(at, 'The name needs at least one letter or digit: it becomes the key (or give "key").')
        } else if (owners.has(key)) {
          this.#add(
            value === undefined ? owners.get(key)! : at,
            `The key ${JSON.stringify(key)} is also the key of ${owners.get(key)}; keys of computed traits and audiences are unique.`,
          )
        }
        owners.set(key, at)
        if (section === 'computedTraits') traitKeys.add(key)
        else {
          const definition =
            value === undefined
              ? this.#stored.audiences.get(name)!.definition
              : isJsonObject(value)
                ? value.definition
                : undefined
          if (definition !== undefined) audienceDefinitions.set(key, definition as AudienceNode)
        }
      }
    }
    return { traitKeys, audienceDefinitions }
  }

  /** An existing object keeps its key (a different one given is a problem of its own); a new one's is given or derived. */
  #keyOf(section: Computations, name: string, value: unknown): string {
    const storedKey = this.#stored[section].get(name)?.key as string | undefined
    const givenKey = isJsonObject(value) ? value.key : undefined
    return storedKey ?? (typeof givenKey === 'string' ? givenKey : snakeCase(name))
  }

  #checkGivenKey(section: Computations, name: string, value: unknown, at: string): void {
    if (!isJsonObject(value) || value.key === undefined) return
    const storedKey = this.#stored[section].get(name)?.key
    if (typeof value.key !== 'string' || !KEY_PATTERN.test(value.key)) {
      this.#add(
        `${at}/key`,
        'A key is snake_case: lower-case letters and digits joined by single underscores, e.g. "orders_last_30_days".',
      )
    } else if (storedKey !== undefined && storedKey !== value.key) {
      this.#add(
        `${at}/key`,
        `The key of "${name}" is ${JSON.stringify(storedKey)} and never changes; leave "key" out, or give the new key to an object with another name.`,
      )
    }
  }

  #trait(value: Record<string, unknown>, at: string, key: string): Canonical {
    const { kind, event, property, where, withinDays } = value
    let definition: ComputedTraitDefinition | undefined
    if (!COMPUTED_TRAIT_KINDS.includes(kind as ComputedTraitKind)) {
      this.#add(`${at}/kind`, `Required: one of ${COMPUTED_TRAIT_KINDS.join(', ')}.`)
    } else if (typeof event !== 'string' || event === '') {
      this.#add(`${at}/event`, 'Required: the track event the calls must have, e.g. "Order Completed".')
    } else if (property !== undefined && (typeof property !== 'string' || property === '')) {
      this.#add(`${at}/property`, 'Must be a call property, e.g. "total" (a dotted path reads nested ones).')
    } else if (where !== undefined && !(Array.isArray(where) && where.every(isJsonObject))) {
      this.#add(
        `${at}/where`,
        'Must be a list of conditions such as {"property": "total", "op": ">", "value": 10}.',
      )
    } else if (withinDays !== undefined && !Number.isInteger(withinDays)) {
      this.#add(`${at}/withinDays`, 'Must be a whole number of days.')
    } else {
      definition = this.#check(at, () =>
        checkedTraitDefinition({
          kind: kind as ComputedTraitKind,
          event,
          ...(property === undefined ? {} : { property: property as string }),
          ...(where === undefined ? {} : { where: where as unknown as WhereCondition[] }),
          ...(withinDays === undefined ? {} : { withinDays: withinDays as number }),
        }),
      )
    }
    return traitCanonical({
      ...(definition ?? { kind: 'count', event: '', property: null, where: [], withinDays: null }),
      key,
      enabled: this.#boolean(value.enabled, true, `${at}/enabled`),
    })
  }

  #audience(
    value: Record<string, unknown>,
    at: string,
    key: string,
    keys: { traitKeys: Set<string>; audienceDefinitions: Map<string, AudienceNode> },
  ): Canonical {
    const others = new Map([...keys.audienceDefinitions].filter(([other]) => other !== key))
    const definition = this.#check('', () =>
      checkDefinition(
        value.definition,
        { computedTraitKeys: keys.traitKeys, audiences: others, ownKey: key },
        `${at}/definition`,
      ),
    )
    return {
      key,
      enabled: this.#boolean(value.enabled, true, `${at}/enabled`),
      definition: definition ?? null,
      includeAnonymous: this.#boolean(value.includeAnonymous, false, `${at}/includeAnonymous`),
    }
  }

  /** Each source has its own write key, among those given and those kept. */
  #uniqueWriteKeys(sourceNames: ReadonlySet<string>, sources: Named): void {
    const owners = new Map<string, string>()
    // Those Sluice keeps first, so a repeat is reported where the document can fix it.
    const ordered = [...sourceNames].sort((a, b) => Number(sources.has(a)) - Number(sources.has(b)))
    for (const name of ordered) {
      const writeKey = (sources.get(name) ?? this.#stored.sources.get(name))?.writeKey
      if (typeof writeKey !== 'string') continue
      const other = owners.get(writeKey)
      if (other !== undefined) {
        this.#add(
          `/sources/${escapePointerToken(name)}/writeKey`,
          `The same write key as source "${other}"; each source has its own.`,
        )
      }
      owners.set(writeKey, name)
    }
  }

  /**
   * The secret a member ends up with: a placeholder keeps the stored one (none for a new object: a
   * problem, except a write key, which Sluice generates); `$env` must have been resolved by the CLI.
   */
  #secret(value: unknown, stored: unknown, at: string, options: { generated: boolean }): unknown {
    if (!isJsonObject(value)) return value
    const keys = Object.keys(value)
    if (keys.length === 1 && typeof value.$secret === 'string') {
      if (stored === undefined && !options.generated) {
        this.#add(
          at,
          'This placeholder keeps the secret Sluice has, but Sluice has none for this object: give the secret itself, or {"$env": "NAME"} with the sluice CLI.',
        )
      }
      return stored
    }
    if (keys.length === 1 && typeof value.$env === 'string') {
      this.#add(
        at,
        `{"$env": ${JSON.stringify(value.$env)}} is read from the environment by the sluice CLI (sluice config plan|apply FILE), which sends the value; the server does not read it. Use the CLI, or give the value.`,
      )
      return stored
    }
    this.#add(
      at,
      'A secret is a string, {"$secret": "…"} (keep the one Sluice has) or {"$env": "NAME"} (CLI only).',
    )
    return stored
  }

  /** A list of names of objects in `known` (sorted, without repeats); each other entry a problem. */
  #names(value: unknown, known: ReadonlySet<string>, what: string, at: string): string[] {
    if (value === undefined) return []
    if (!Array.isArray(value)) {
      this.#add(at, `Must be a list of ${what} names, e.g. ["Web app"].`)
      return []
    }
    value.forEach((name, index) => {
      if (typeof name !== 'string' || !known.has(name)) {
        this.#add(
          `${at}/${index}`,
          `${JSON.stringify(name)} names no ${what} in the document or kept in Sluice; use the name of one (names are matched exactly).`,
        )
      }
    })
    return [...new Set(value.filter((name): name is string => typeof name === 'string'))].sort(compareNames)
  }

  #boolean(value: unknown, fallback: boolean, at: string): boolean {
    if (value === undefined) return fallback
    if (typeof value !== 'boolean') this.#add(at, 'Must be true or false.')
    return value === true
  }

  #unknownMembers(object: Record<string, unknown>, allowed: string[], at: string): void {
    for (const key of Object.keys(object)) {
      if (!allowed.includes(key)) {
        this.#add(
          `${at}/${escapePointerToken(key)}`,
          `Unknown member "${key}"; allowed: ${allowed.join(', ')}.`,
        )
      }
    }
  }

  #add(field: string, message: string): void {
    this.#problems.push({ field, message })
  }

  /** Runs a rule of the API's; its ValidationError becomes a problem under `at` (its field is relative). */
  #check<T>(at: string, rule: () => T): T | undefined {
    try {
      return rule()
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error
      this.#add(at + error.field, error.message)
      return undefined
    }
  }
}
