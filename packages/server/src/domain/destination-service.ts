/**
 * What can be done with destinations, for every caller: names are cleaned, settings checked by the
 * destination kind's policy, and every connected source must exist.
 */

import { type DeliveryStats, NO_DELIVERIES_YET } from './deliveries.ts'
import type { DeliveryStore, DestinationPatch } from './delivery-store.ts'
import {
  DESTINATION_TYPES,
  type Destination,
  type DestinationType,
  destinationNotFound,
} from './destinations.ts'
import { ValidationError } from './errors.ts'
import { requireDestination } from './lookups.ts'
import { cleanName } from './names.ts'
import type { SourceStore } from './source-store.ts'
import { validateWebhooksSettings } from './webhook-settings.ts'

export interface DestinationWithStats {
  destination: Destination
  stats: DeliveryStats
}

export interface NewDestinationInput {
  /** Surrounding whitespace is removed; see `cleanName`. */
  name: string
  type: DestinationType
  /** Whether it receives messages at once. Default true. */
  enabled?: boolean
  /** Ids of existing sources whose messages it receives. Default none. */
  sourceIds?: string[]
  /** As the user gave them; checked in depth by `validateWebhooksSettings`. */
  settings: unknown
}

export interface DestinationChanges {
  name?: string
  enabled?: boolean
  /** Replaces the whole list. */
  sourceIds?: string[]
  /** Members left out keep their current values (`sharedSecret: null` removes the secret). */
  settings?: unknown
}

export class DestinationService {
  private readonly store: DeliveryStore & SourceStore

  constructor(store: DeliveryStore & SourceStore) {
    this.store = store
  }

  async create(input: NewDestinationInput): Promise<DestinationWithStats> {
    const { type, enabled = true, sourceIds = [] } = input
    const name = cleanName(input.name)
    if (!DESTINATION_TYPES.includes(type)) {
      const allowed = DESTINATION_TYPES.map((each) => JSON.stringify(each)).join(', ')
      throw new ValidationError('/type', `type must be one of: ${allowed}.`)
    }
    const settings = validateWebhooksSettings(input.settings)
    await this.requireSources(sourceIds)
    const destination = await this.store.createDestination({ name, type, enabled, sourceIds, settings })
    return { destination, stats: NO_DELIVERIES_YET }
  }

  /** Every destination, oldest first. */
  async list(): Promise<DestinationWithStats[]> {
    const destinations = await this.store.listDestinations()
    return Promise.all(destinations.map((destination) => this.withStats(destination)))
  }

  async get(id: string): Promise<DestinationWithStats> {
    return this.withStats(await requireDestination(this.store, id))
  }

  /** Changes only what `changes` gives. */
  async update(id: string, changes: DestinationChanges): Promise<DestinationWithStats> {
    const current = await requireDestination(this.store, id)
    const { name, enabled, sourceIds, settings } = changes
    const patch: DestinationPatch = {}
    if (name !== undefined) patch.name = cleanName(name)
    if (enabled !== undefined) patch.enabled = enabled
    if (settings !== undefined) patch.settings = validateWebhooksSettings(settings, current.settings)
    if (sourceIds !== undefined) {
      await this.requireSources(sourceIds)
      patch.sourceIds = sourceIds
    }
    const updated = await this.store.updateDestination(id, patch)
    if (updated === null) throw destinationNotFound(id) // deleted meanwhile
    return this.withStats(updated)
  }

  async delete(id: string): Promise<void> {
    if (!(await this.store.deleteDestination(id))) throw destinationNotFound(id)
  }

  /** Refuses the first id that names no source, so a destination is never connected to nothing. */
  private async requireSources(sourceIds: readonly string[]): Promise<void> {
    const found = await Promise.all(sourceIds.map((id) => this.store.getSource(id)))
    const missing = found.indexOf(null)
    if (missing !== -1) {
      throw new ValidationError(
        `/sourceIds/${missing}`,
        `sourceIds[${missing}]: no source has id "${sourceIds[missing]}". Use the id of an existing source (GET /api/v1/sources).`,
      )
    }
  }

  private async withStats(destination: Destination): Promise<DestinationWithStats> {
    return { destination, stats: await this.store.deliveryStats(destination.id) }
  }
}
