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
  type SecretRotation,
  type WebhooksSettings,
} from './destinations.ts'
import { type EndpointHealth, readEndpointHealth } from './endpoint-health.ts'
import { ValidationError } from './errors.ts'
import type { HealthStore } from './health-store.ts'
import { requireDestination } from './lookups.ts'
import { cleanName } from './names.ts'
import { type RotationRequest, rotateSecret, rotationsOf } from './secret-rotation.ts'
import type { SourceStore } from './source-store.ts'
import { validateWebhooksSettings } from './webhook-settings.ts'

export interface DestinationWithStats {
  destination: Destination
  stats: DeliveryStats
  /** Each URL's health, in the order of its webhooks. */
  health: EndpointHealth[]
}

/** A destination as saved: with the Standard Webhooks secret Sluice made, when this save made one (shown once). */
export interface SavedDestination extends DestinationWithStats {
  generatedSecret?: string
}

/** A rotation as answered: the new secret, shown this once. */
export interface RotationAnswer {
  secret: string
  rotation: SecretRotation
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

/** Attempts per destination the list reads for health (a destination's own page reads HEALTH_SAMPLE). */
const LIST_HEALTH_SAMPLE = 200

export class DestinationService {
  private readonly store: DeliveryStore & SourceStore & HealthStore

  constructor(store: DeliveryStore & SourceStore & HealthStore) {
    this.store = store
  }

  async create(input: NewDestinationInput): Promise<SavedDestination> {
    const { type, enabled = true, sourceIds = [] } = input
    const name = cleanName(input.name)
    if (!DESTINATION_TYPES.includes(type)) {
      const allowed = DESTINATION_TYPES.map((each) => JSON.stringify(each)).join(', ')
      throw new ValidationError('/type', `type must be one of: ${allowed}.`)
    }
    const settings = validateWebhooksSettings(input.settings)
    await this.requireSources(sourceIds)
    const destination = await this.store.createDestination({ name, type, enabled, sourceIds, settings })
    return {
      destination,
      stats: NO_DELIVERIES_YET,
      health: await this.health(destination),
      ...generated(input.settings, undefined, settings),
    }
  }

  /** Every destination, oldest first. */
  async list(): Promise<DestinationWithStats[]> {
    const destinations = await this.store.listDestinations()
    // One read of the URL states for all, and fewer attempts each than a single destination's page reads.
    const health = await readEndpointHealth(this.store, destinations, LIST_HEALTH_SAMPLE)
    return Promise.all(
      destinations.map(async (destination, i) => ({
        destination,
        stats: await this.store.deliveryStats(destination.id),
        health: health[i]?.health ?? [],
      })),
    )
  }

  async get(id: string): Promise<DestinationWithStats> {
    return this.withStats(await requireDestination(this.store, id))
  }

  /** Changes only what `changes` gives. */
  async update(id: string, changes: DestinationChanges): Promise<SavedDestination> {
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
    const made = patch.settings ? generated(settings, current.settings, patch.settings) : {}
    return { ...(await this.withStats(updated)), ...made }
  }

  /** Rotates one of the destination's signing secrets (secret-rotation.ts); answers the new secret once. */
  async rotateSecret(id: string, request: RotationRequest): Promise<RotationAnswer> {
    const current = await requireDestination(this.store, id)
    const { settings, secret, rotation } = rotateSecret(current.settings, request, Date.now())
    if ((await this.store.updateDestination(id, { settings })) === null) throw destinationNotFound(id)
    return { secret, rotation }
  }

  /** The rotations made, newest first (times only). */
  async rotations(id: string): Promise<SecretRotation[]> {
    return rotationsOf((await requireDestination(this.store, id)).settings)
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

  /**
   * Enables a disabled URL again (`index` counts from 0 in `settings.webhooks`): it gets requests at
   * once, and the deliveries that waited for it go out.
   */
  async enableUrl(id: string, index: number): Promise<DestinationWithStats> {
    const destination = await requireDestination(this.store, id)
    const webhook = destination.settings.webhooks[index]
    if (webhook === undefined) {
      const count = destination.settings.webhooks.length
      throw new ValidationError(
        '/index',
        `This destination has ${count} URL${count === 1 ? '' : 's'}; index must be from 0 to ${count - 1}.`,
      )
    }
    await this.store.enableEndpoint(id, webhook.url, Date.now())
    return this.withStats(destination)
  }

  private async withStats(destination: Destination): Promise<DestinationWithStats> {
    const [stats, health] = await Promise.all([
      this.store.deliveryStats(destination.id),
      this.health(destination),
    ])
    return { destination, stats, health }
  }

  /** Read, not kept: the URLs' shared states and the destination's newest attempts (endpoint-health.ts). */
  private async health(destination: Destination): Promise<EndpointHealth[]> {
    const [read] = await readEndpointHealth(this.store, [destination])
    return read?.health ?? []
  }
}

/** The Standard Webhooks secret a save made (neither given nor there before), to show this once. */
function generated(
  input: unknown,
  before: WebhooksSettings | undefined,
  after: WebhooksSettings,
): { generatedSecret?: string } {
  const secret = after.standardWebhooksSecret
  const given = (input as { standardWebhooksSecret?: unknown } | undefined)?.standardWebhooksSecret
  if (secret === undefined || secret === before?.standardWebhooksSecret || secret === given) return {}
  return { generatedSecret: secret }
}
