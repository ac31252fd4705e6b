/**
 * What configuration as code asks of storage: a whole set of changes to sources, destinations,
 * computed traits and audiences, committed in one transaction (all or nothing). One area of the store
 * contract (store/store.ts, with its conventions); the store implements it in store/core/config.ts.
 * What to change is decided by the domain (config-plan.ts), checked before it gets here.
 */

import type { AudienceNode } from './audiences.ts'
import type { ComputedTraitKind, WhereCondition } from './computed-traits.ts'
import type { DestinationType, WebhooksSettings } from './destinations.ts'

/** A source that exists (`id`), or one created by the same writes (`created`: its name). */
export type SourceRef = { id: string } | { created: string }
/** A destination that exists (`id`), or one created by the same writes (`created`: its name). */
export type DestinationRef = { id: string } | { created: string }

export interface ConfigSourceCreate {
  name: string
  enabled: boolean
  /** Null: a new one is generated. */
  writeKey: string | null
}

export interface ConfigSourceUpdate {
  id: string
  enabled?: boolean
  /** Replaces the write key (the old one stops working at once). */
  writeKey?: string
}

export interface ConfigDestinationCreate {
  name: string
  type: DestinationType
  enabled: boolean
  sources: SourceRef[]
  settings: WebhooksSettings
}

export interface ConfigDestinationUpdate {
  id: string
  enabled?: boolean
  /** Replaces the connections. */
  sources?: SourceRef[]
  /** Replaces the settings whole. */
  settings?: WebhooksSettings
}

export interface ComputedTraitDefinition {
  kind: ComputedTraitKind
  event: string
  property: string | null
  where: WhereCondition[]
  withinDays: number | null
}

export interface ConfigComputedTraitCreate {
  name: string
  key: string
  enabled: boolean
  definition: ComputedTraitDefinition
  destinations: DestinationRef[]
}

export interface ConfigComputedTraitUpdate {
  id: string
  enabled?: boolean
  definition?: ComputedTraitDefinition
  destinations?: DestinationRef[]
}

export interface ConfigAudienceCreate {
  name: string
  key: string
  enabled: boolean
  definition: AudienceNode
  includeAnonymous: boolean
  destinations: DestinationRef[]
}

export interface ConfigAudienceUpdate {
  id: string
  enabled?: boolean
  definition?: AudienceNode
  includeAnonymous?: boolean
  destinations?: DestinationRef[]
}

/** Every change of one apply; ids name existing objects. */
export interface ConfigWrites {
  sources: { create: ConfigSourceCreate[]; update: ConfigSourceUpdate[]; delete: string[] }
  destinations: { create: ConfigDestinationCreate[]; update: ConfigDestinationUpdate[]; delete: string[] }
  computedTraits: {
    create: ConfigComputedTraitCreate[]
    update: ConfigComputedTraitUpdate[]
    delete: string[]
  }
  audiences: { create: ConfigAudienceCreate[]; update: ConfigAudienceUpdate[]; delete: string[] }
}

/** Whether an apply was made; when not, nothing was written, and why (another change came first). */
export type ConfigApplied = { applied: true } | { applied: false; reason: string }

export interface ConfigStore {
  /**
   * Makes every change in one transaction: deletions of computations first (their keys may be reused),
   * then sources, destinations, their deletions, and the computations' creations and updates. A new
   * computation's backfill is queued, a changed one's profiles again, as their own methods do. Applies
   * run one at a time (on PostgreSQL, across processes). When an object to update or delete is gone,
   * one to create exists by now, or a computation's key is taken, nothing is applied and it answers
   * why. Announces `sources` and `config` after the commit.
   */
  applyConfig(writes: ConfigWrites): Promise<ConfigApplied>
}
