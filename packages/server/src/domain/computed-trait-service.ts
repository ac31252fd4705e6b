/**
 * What can be done with computed traits, for every caller (management API, CLI): definitions are
 * checked here (the kind's property, the where list, the window, the destinations), and the key is
 * derived from the name once, at creation.
 */
import type { ComputedTraitPatch, Store } from '../store/store.ts'
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
import { ValidationError } from './errors.ts'
import { cleanName } from './names.ts'

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

export class ComputedTraitService {
  private readonly store: Store

  constructor(store: Store) {
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
    const destinationIds = await existingDestinations(this.store, input.destinationIds ?? [])
    const created = await this.store.createComputedTrait({
      name,
      key,
      kind: input.kind,
      event: input.event,
      property: input.kind === 'count' ? null : input.property!,
      where,
      withinDays: input.withinDays ?? null,
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

  /** The name (the key stays) and the destinations; a destination added receives every current value. */
  async update(id: string, changes: { name?: string; destinationIds?: string[] }): Promise<ComputedTrait> {
    const patch: ComputedTraitPatch = {}
    if (changes.name !== undefined) patch.name = cleanName(changes.name)
    if (changes.destinationIds !== undefined)
      patch.destinationIds = await existingDestinations(this.store, changes.destinationIds)
    const updated = await this.store.updateComputedTrait(id, patch)
    if (updated === null) throw computedTraitNotFound(id)
    return updated
  }

  /** With its values; nothing is sent to destinations. */
  async delete(id: string): Promise<void> {
    if (!(await this.store.deleteComputedTrait(id))) throw computedTraitNotFound(id)
  }
}
