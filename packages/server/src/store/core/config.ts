/**
 * The configuration-as-code area of the store core (domain/config-store.ts): one apply's records made
 * rows (ids, times, settings text, the computations' backfill and requeue scopes decided by the profile
 * rules, as their own methods do) and written in one transaction by the backend's `config` SQL.
 */
import type {
  ConfigApplied,
  ConfigStore,
  ConfigWrites,
  DestinationRef,
  SourceRef,
} from '../../domain/config-store.ts'
import { newId, newSecretToken } from '../../lib/ids.ts'
import { type AudienceDefinition, type ComputationRow, newComputationRow } from '../tables/computations.ts'
import { type ConfigRowWrites, StaleConfigWrite } from '../tables/config.ts'
import { routingText, settingsText } from '../tables/destinations.ts'
import type { Changes } from './changes.ts'
import type { ProfileRules } from './profile-rules.ts'
import { writeKeyHash } from './sources.ts'
import type { StoreSql } from './store-sql.ts'
import type { StoredSecrets } from './stored-secrets.ts'

type ConfigTables = Pick<StoreSql, 'config' | 'computations'>

export class ConfigCore implements ConfigStore {
  readonly #sql: ConfigTables
  readonly #rules: ProfileRules
  readonly #changes: Changes
  readonly #secrets: StoredSecrets

  /** `secrets`: how write keys and settings are kept at rest, as the sources and deliveries areas keep them. */
  constructor(sql: ConfigTables, rules: ProfileRules, changes: Changes, secrets: StoredSecrets) {
    this.#sql = sql
    this.#rules = rules
    this.#changes = changes
    this.#secrets = secrets
  }

  async applyConfig(writes: ConfigWrites): Promise<ConfigApplied> {
    try {
      await this.#sql.config.apply(await this.#rows(writes))
    } catch (error) {
      if (error instanceof StaleConfigWrite) return { applied: false, reason: error.message }
      throw error
    }
    this.#changes.committed('sources')
    this.#changes.committed('config')
    return { applied: true }
  }

  /** The writes as rows: ids and times given, the computations' changes and queues decided by the rules. */
  async #rows(writes: ConfigWrites): Promise<ConfigRowWrites> {
    const now = Date.now()
    const newSourceIds = new Map(writes.sources.create.map((source) => [source.name, newId('src')]))
    const newDestinationIds = new Map(
      writes.destinations.create.map((destination) => [destination.name, newId('dst')]),
    )
    const sourceId = (ref: SourceRef) => ('id' in ref ? ref.id : newSourceIds.get(ref.created)!)
    const destinationIds = (refs: DestinationRef[]) =>
      JSON.stringify(refs.map((ref) => ('id' in ref ? ref.id : newDestinationIds.get(ref.created)!)))

    const insertComputations: ConfigRowWrites['insertComputations'] = []
    const updateComputations: ConfigRowWrites['updateComputations'] = []
    const insert = (row: ComputationRow, enabled: boolean) => {
      insertComputations.push({ row, queue: this.#rules.backfill(row) })
      if (!enabled) updateComputations.push(this.#change(row, { enabled: false }, now))
    }
    for (const trait of writes.computedTraits.create) {
      const base = { id: newId('ctr'), name: trait.name, key: trait.key, destinationIds: [], now }
      const row = newComputationRow('computed_trait', base, trait.definition)
      insert({ ...row, destination_ids: destinationIds(trait.destinations) }, trait.enabled)
    }
    for (const audience of writes.audiences.create) {
      const base = { id: newId('aud'), name: audience.name, key: audience.key, destinationIds: [], now }
      const definition = { tree: audience.definition, includeAnonymous: audience.includeAnonymous }
      const row = newComputationRow('audience', base, definition)
      insert({ ...row, destination_ids: destinationIds(audience.destinations) }, audience.enabled)
    }
    for (const trait of writes.computedTraits.update) {
      const { id, definition, destinations, enabled } = trait
      updateComputations.push(
        this.#change(
          await this.#current(id),
          {
            ...(definition === undefined ? {} : { definition }),
            ...(destinations === undefined
              ? {}
              : { destinationIds: JSON.parse(destinationIds(destinations)) }),
            ...(enabled === undefined ? {} : { enabled }),
          },
          now,
        ),
      )
    }
    for (const audience of writes.audiences.update) {
      const { id, definition, includeAnonymous, destinations, enabled } = audience
      const row = await this.#current(id)
      const stored = JSON.parse(row.definition) as AudienceDefinition
      const changesDefinition = definition !== undefined || includeAnonymous !== undefined
      updateComputations.push(
        this.#change(
          row,
          {
            ...(changesDefinition
              ? {
                  definition: {
                    tree: definition ?? stored.tree,
                    includeAnonymous: includeAnonymous ?? stored.includeAnonymous,
                  },
                }
              : {}),
            ...(destinations === undefined
              ? {}
              : { destinationIds: JSON.parse(destinationIds(destinations)) }),
            ...(enabled === undefined ? {} : { enabled }),
          },
          now,
        ),
      )
    }

    return {
      newNames: {
        sources: writes.sources.create.map((source) => source.name),
        destinations: writes.destinations.create.map((destination) => destination.name),
        computedTraits: writes.computedTraits.create.map((trait) => trait.name),
        audiences: writes.audiences.create.map((audience) => audience.name),
      },
      deleteComputations: [...writes.audiences.delete, ...writes.computedTraits.delete],
      insertSources: writes.sources.create.map((source) => {
        const id = newSourceIds.get(source.name)!
        const writeKey = source.writeKey ?? newSecretToken()
        return {
          id,
          name: source.name,
          write_key: this.#secrets.seal(writeKey, id),
          write_key_hash: writeKeyHash(writeKey),
          enabled: source.enabled,
          created_at: now,
        }
      }),
      updateSources: writes.sources.update.map(({ id, enabled, writeKey }) => ({
        id,
        change: {
          name: null,
          enabled: enabled ?? null,
          writeKey: writeKey
            ? { stored: this.#secrets.seal(writeKey, id), hash: writeKeyHash(writeKey) }
            : null,
        },
      })),
      insertDestinations: writes.destinations.create.map((destination) => ({
        row: {
          id: newDestinationIds.get(destination.name)!,
          name: destination.name,
          type: destination.type,
          enabled: destination.enabled,
          settings: this.#secrets.seal(
            settingsText(destination.settings),
            newDestinationIds.get(destination.name)!,
          ),
          routing: routingText(destination.settings),
          created_at: now,
          updated_at: now,
        },
        sourceIds: destination.sources.map(sourceId),
      })),
      updateDestinations: writes.destinations.update.map(({ id, enabled, settings, sources }) => ({
        id,
        change: {
          name: null,
          enabled: enabled ?? null,
          settings: settings ? this.#secrets.seal(settingsText(settings), id) : null,
          routing: settings ? routingText(settings) : null,
          updatedAt: now,
        },
        sourceIds: sources?.map(sourceId),
      })),
      deleteDestinations: writes.destinations.delete,
      deleteSources: writes.sources.delete,
      insertComputations,
      updateComputations,
    }
  }

  async #current(id: string): Promise<ComputationRow> {
    const row = await this.#sql.computations.get(id)
    if (!row) throw new StaleConfigWrite(`Computation ${id} was deleted meanwhile.`)
    return row
  }

  #change(
    row: ComputationRow,
    patch: Parameters<ProfileRules['change']>[1],
    now: number,
  ): ConfigRowWrites['updateComputations'][number] {
    const { change, scope } = this.#rules.change(row, patch, Math.max(now, row.updated_at + 1))
    return { id: row.id, change, queue: scope, read: row }
  }
}
