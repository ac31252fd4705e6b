/**
 * Configuration as code for every caller (management API; the CLI through it): export what Sluice has
 * as a document, plan what a document would change, apply it in one transaction. The rules are in
 * config-document.ts, config-reading.ts and config-plan.ts; this reads the stored records and writes
 * through the store.
 */
import {
  type ConfigChange,
  type CurrentConfig,
  exportConfig,
  SECTIONS,
  type SettingsFields,
  type SettingsPolicy,
} from './config-document.ts'
import { planConfig } from './config-plan.ts'
import type { ConfigStore } from './config-store.ts'
import type { DeliveryStore } from './delivery-store.ts'
import { ConflictError } from './errors.ts'
import type { ProfileStore } from './profile-store.ts'
import type { SourceStore } from './source-store.ts'
import { validateWebhooksSettings } from './webhook-settings.ts'

/** Where each section's objects are renamed, for the message about duplicate names. */
const RENAME_ROUTES = {
  sources: 'PATCH /api/v1/sources/:id',
  destinations: 'PATCH /api/v1/destinations/:id',
  computedTraits: 'PATCH /api/v1/computed-traits/:id',
  audiences: 'PATCH /api/v1/audiences/:id',
} as const

export class ConfigService {
  private readonly store: ConfigStore & SourceStore & DeliveryStore & ProfileStore
  private readonly fields: SettingsFields
  private readonly settingsPolicy: SettingsPolicy
  /** The apply in progress: applies in this process wait for each other, so none plans against a state another is changing. */
  private applying: Promise<unknown> = Promise.resolve()

  /** `fields`: the destination settings' members and secrets, from their schema. */
  constructor(
    store: ConfigStore & SourceStore & DeliveryStore & ProfileStore,
    fields: SettingsFields,
    settingsPolicy: SettingsPolicy = (input) => validateWebhooksSettings(input),
  ) {
    this.store = store
    this.fields = fields
    this.settingsPolicy = settingsPolicy
  }

  /** The document of what Sluice has now; secrets as placeholders unless `secrets`. */
  async export(options: { secrets: boolean }): Promise<Record<string, unknown>> {
    return exportConfig(await this.current(), this.fields, options)
  }

  /** The changes `document` would make; nothing is changed. */
  async plan(document: unknown): Promise<ConfigChange[]> {
    return planConfig(await this.current(), document, this.fields, this.settingsPolicy).changes
  }

  /** Makes the changes `document` asks for, all in one transaction, and answers them. */
  apply(document: unknown): Promise<ConfigChange[]> {
    const applied = this.applying.then(async () => {
      const { changes, writes } = planConfig(await this.current(), document, this.fields, this.settingsPolicy)
      if (changes.length === 0) return changes
      const result = await this.store.applyConfig(writes)
      if (!result.applied) {
        throw new ConflictError(
          'config_changed',
          `${result.reason} Nothing was applied; plan again and apply what the plan shows.`,
        )
      }
      return changes
    })
    this.applying = applied.catch(() => {})
    return applied
  }

  /** What Sluice has; refused when a name is used twice in a section (a document could not tell them apart). */
  private async current(): Promise<CurrentConfig> {
    const [sources, destinations, computedTraits, audiences] = await Promise.all([
      this.store.listSources(),
      this.store.listDestinations(),
      this.store.listComputedTraits(),
      this.store.listAudiences(),
    ])
    const current = { sources, destinations, computedTraits, audiences }
    const duplicates = SECTIONS.flatMap((section) => {
      const ids = new Map<string, string[]>()
      for (const { name, id } of current[section]) ids.set(name, [...(ids.get(name) ?? []), id])
      return [...ids]
        .filter(([, same]) => same.length > 1)
        .map(
          ([name, same]) =>
            `${section} "${name}" (${same.join(', ')}; rename with ${RENAME_ROUTES[section]})`,
        )
    })
    if (duplicates.length > 0) {
      throw new ConflictError(
        'duplicate_names',
        `Configuration as code matches objects by name, and these names are used more than once: ${duplicates.join('; ')}. Rename all but one of each and try again.`,
      )
    }
    return current
  }
}
