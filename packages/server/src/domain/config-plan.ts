/**
 * The plan of a configuration document (config-document.ts): what differs between what Sluice has and
 * what the document asks for, field by field, as changes to show and as the store's writes.
 */
import { isDeepStrictEqual } from 'node:util'
import { isJsonObject } from '../lib/json-object.ts'
import type { AudienceNode } from './audiences.ts'
import type { ComputedTraitKind, WhereCondition } from './computed-traits.ts'
import {
  type Canonical,
  type ConfigChange,
  type ConfigSection,
  type CurrentConfig,
  canonicalOf,
  compareNames,
  type FieldChange,
  masked,
  SECTIONS,
  type SettingsFields,
  type SettingsPolicy,
  secretMembers,
  secretPath,
} from './config-document.ts'
import { readDocument } from './config-reading.ts'
import type { ComputedTraitDefinition, ConfigWrites, DestinationRef, SourceRef } from './config-store.ts'
import type { Destination, DestinationType, WebhooksSettings } from './destinations.ts'

/** What the writes refer to by name: sources and destinations (existing or created), and the settings to write. */
interface References {
  source(name: string): SourceRef
  destination(name: string): DestinationRef
  /** A destination's settings as its policy returned them. */
  settings(name: string): WebhooksSettings
}

/**
 * The stored settings members the document does not describe (not in the settings' schema: state
 * Sluice keeps for itself, such as a generated secret): an apply leaves them as they are.
 */
function serverKept(destination: Destination | undefined, fields: SettingsFields): Partial<WebhooksSettings> {
  if (destination === undefined) return {}
  return Object.fromEntries(
    Object.entries(destination.settings).filter(([member]) => !fields.names.includes(member)),
  ) as Partial<WebhooksSettings>
}

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
  const refs: References = {
    source: (name) => {
      const id = ids.sources.get(name)
      return id === undefined ? { created: name } : { id }
    },
    destination: (name) => {
      const id = ids.destinations.get(name)
      return id === undefined ? { created: name } : { id }
    },
    settings: (name) => ({
      ...serverKept(
        current.destinations.find((destination) => destination.name === name),
        fields,
      ),
      ...desired.destinationSettings.get(name)!,
    }),
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
        addCreate(writes, section, name, after, refs)
      } else {
        const fieldChanges = differences(before, after)
        if (fieldChanges.length === 0) continue
        changes.push({
          action: 'update',
          section,
          name,
          fields: fieldChanges.map((change) => shownChange(change, section, name, fields)),
        })
        addUpdate(writes, section, name, ids[section].get(name)!, fieldChanges, after, refs)
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
  refs: References,
): void {
  const destinations = () => (object.destinations as string[]).map(refs.destination)
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
      sources: (object.sources as string[]).map(refs.source),
      settings: refs.settings(name),
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
  name: string,
  id: string,
  changes: FieldChange[],
  object: Canonical,
  refs: References,
): void {
  const changed = (field: string) =>
    changes.some((change) => change.field === field || change.field.startsWith(`${field}/`))
  const enabled = changed('/enabled') ? { enabled: object.enabled as boolean } : {}
  const destinations = changed('/destinations')
    ? { destinations: (object.destinations as string[]).map(refs.destination) }
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
      ...(changed('/sources') ? { sources: (object.sources as string[]).map(refs.source) } : {}),
      ...(changed('/settings') ? { settings: refs.settings(name) } : {}),
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
