import { DESTINATION_NAMES, type DestinationType } from '../store/store.ts'

const ALL_TYPES = Object.keys(DESTINATION_NAMES) as DestinationType[]

/**
 * SPEC §3: which destination types a message may go to, from its `integrations` object.
 * Keys are destination names, case sensitive (`Webhooks`). By default every destination is on;
 * `All: false` turns off every destination not explicitly on. A destination's value counts as "on"
 * when it is `true` or an options object (as Segment allows), "off" only when it is `false`.
 */
export function routeTo(integrations: unknown): DestinationType[] {
  if (integrations === null || typeof integrations !== 'object') return ALL_TYPES
  const settings = integrations as Record<string, unknown>
  const defaultOn = settings.All !== false
  return ALL_TYPES.filter((type) => {
    const value = Object.hasOwn(settings, DESTINATION_NAMES[type])
      ? settings[DESTINATION_NAMES[type]]
      : undefined
    if (value === undefined) return defaultOn
    return value !== false
  })
}
