/**
 * What can be done with computed traits, for every caller (management API, CLI): definitions are
 * checked here (the kind's property, the where list, the window, the destinations), and the key is
 * derived from the name once, at creation.
 */

import { existingDestinations } from './audience-service.ts'
import {
  type ComputedTrait,
  type ComputedTraitKind,
  checkWhere,
  computedKeyTaken,
  computedTraitNotFound,
  MAX_WITHIN_DAYS,
  snakeCase,
  type WhereCondition,
} from './computed-traits.ts'
import type { DeliveryStore } from './delivery-store.ts'
import { ValidationError } from './errors.ts'
import { cleanName } from './names.ts'
import type { ComputedTraitPatch, ProfileStore } from './profile-store.ts'

export interface NewComputedTraitInput {
  name: string
  kind: ComputedTraitKind
  event: string
  /** Required for every kind but `count`: the call property read (a dotted path for nested ones). */
  property?: string
  /** Default: every call of the event. */
  where?: WhereCondition[]
  /** Only calls of the last this many days. Default: all history. */
  withinDays?: number
  /** Destinations that receive an identify whenever the value changes. Default none. */
  destinationIds?: string[]
}

/** What PATCH may change; `null` removes `property` or `withinDays`. */
export interface ComputedTraitChanges {
  name?: string
  destinationIds?: string[]
  enabled?: boolean
  kind?: ComputedTraitKind
  event?: string
  property?: string | null
  where?: WhereCondition[]
  withinDays?: number | null
}

const DEFINITION_FIELDS = ['kind', 'event', 'property', 'where', 'withinDays'] as const

function optional<K extends string, V>(key: K, value: V | null): { [P in K]?: V } {
  return (value === null ? {} : { [key]: value }) as { [P in K]?: V }
}

/** A definition checked (the kind's property, the where list, the window) and normalized. */
export function checkedTraitDefinition(
  input: Pick<NewComputedTraitInput, 'kind' | 'event' | 'property' | 'where' | 'withinDays'>,
): Required<ComputedTraitPatch>['definition'] {
  if (input.kind !== 'count' && !input.property) {
    throw new ValidationError(
      '/property',
      `A ${input.kind} trait reads a property: give "property", e.g. "total".`,
    )
  }
  const where = input.where ?? []
  checkWhere(where, '/where')
  if (input.withinDays !== undefined && !(input.withinDays >= 1 && input.withinDays <= MAX_WITHIN_DAYS)) {
    throw new ValidationError(
      '/withinDays',
      `withinDays must be a whole number of days from 1 to ${MAX_WITHIN_DAYS}.`,
    )
  }
  return {
    kind: input.kind,
    event: input.event,
    property: input.kind === 'count' ? null : input.property!,
    where,
    withinDays: input.withinDays ?? null,
  }
}

export class ComputedTraitService {
  private readonly store: ProfileStore & DeliveryStore

  constructor(store: ProfileStore & DeliveryStore) {
    this.store = store
  }

  async create(input: NewComputedTraitInput): Promise<ComputedTrait> {
    const name = cleanName(input.name)
    const key = snakeCase(name)
    if (key === '') {
      throw new ValidationError(
        '/name',
        'The name needs at least one letter or digit: it becomes the trait key.',
      )
    }
    const definition = checkedTraitDefinition(input)
    const destinationIds = await existingDestinations(this.store, input.destinationIds ?? [])
    const created = await this.store.createComputedTrait({
      name,
      key,
      ...definition,
      destinationIds,
    })
    if (created === null) throw computedKeyTaken(key)
    return created
  }

  /** Oldest first. */
  list(): Promise<ComputedTrait[]> {
    return this.store.listComputedTraits()
  }

  async get(id: string): Promise<ComputedTrait> {
    const trait = await this.store.getComputedTrait(id)
    if (trait === null) throw computedTraitNotFound(id)
    return trait
  }

  /**
   * The name (the key stays), the destinations (a destination added receives every current value),
   * the definition (any of kind, event, property, where, withinDays: computed over history again, and
   * only the values that change are sent) and `enabled` (false: neither evaluated nor synced; true: on
   * again, a failed one retried).
   */
  async update(id: string, changes: ComputedTraitChanges): Promise<ComputedTrait> {
    const patch: ComputedTraitPatch = {}
    if (changes.name !== undefined) patch.name = cleanName(changes.name)
    if (changes.destinationIds !== undefined)
      patch.destinationIds = await existingDestinations(this.store, changes.destinationIds)
    if (changes.enabled !== undefined) patch.enabled = changes.enabled
    if (DEFINITION_FIELDS.some((field) => changes[field] !== undefined)) {
      const current = await this.get(id)
      patch.definition = checkedTraitDefinition({
        kind: changes.kind ?? current.kind,
        event: changes.event ?? current.event,
        ...optional('property', changes.property === undefined ? current.property : changes.property),
        where: changes.where ?? current.where,
        ...optional('withinDays', changes.withinDays === undefined ? current.withinDays : changes.withinDays),
      })
    }
    const updated = await this.store.updateComputedTrait(id, patch)
    if (updated === null) throw computedTraitNotFound(id)
    return updated
  }

  /** With its values; nothing is sent to destinations. */
  async delete(id: string): Promise<void> {
    if (!(await this.store.deleteComputedTrait(id))) throw computedTraitNotFound(id)
  }
}
