/**
 * Routing (docs/tracking-api.md#routing) has two halves:
 * - here, from the call alone: which destination kinds its `integrations` object allows;
 * - at commit: which destinations of those kinds get it — the enabled ones connected to its source —
 *   decided in the same transaction that stores the call (`store/<backend>/sql/ingest.ts`), so a crash
 *   can never lose a delivery that should exist.
 */
import { DESTINATION_NAMES, DESTINATION_TYPES, type DestinationType } from '../domain/destinations.ts'

/**
 * Which destination kinds a call may go to, from its `integrations` object.
 * Keys are destination names, case sensitive (`Webhooks`). By default every destination is on;
 * `All: false` turns off every destination the object does not name. A named destination is "off"
 * only when its value is `false`; anything else (`true`, an options object as Segment allows) is "on".
 */
export function routeTo(integrations: unknown): readonly DestinationType[] {
  if (integrations === null || typeof integrations !== 'object') return DESTINATION_TYPES
  const settings = integrations as Record<string, unknown>
  const defaultOn = settings.All !== false
  return DESTINATION_TYPES.filter((type) => {
    const value = Object.hasOwn(settings, DESTINATION_NAMES[type])
      ? settings[DESTINATION_NAMES[type]]
      : undefined
    if (value === undefined) return defaultOn
    return value !== false
  })
}
