/** The `destinations` table and `destination_sources`, its connections to sources. */
import type { Destination, DestinationType, WebhooksSettings } from '../../domain/destinations.ts'
import type { Awaitable, Flag } from './sql-types.ts'

export interface DestinationRow {
  id: string
  name: string
  type: string
  enabled: Flag
  settings: string
  /** Its subscription and filters in clear, for routing (routingText); null: none. */
  routing: string | null
  created_at: number
  updated_at: number
}

/** One source connected to one destination (destination_sources). */
export interface ConnectionRow {
  destination_id: string
  source_id: string
}

/** What a destination's subscription and filters kept from it (destination_counters, summed over shards). */
export interface GatedCountRow {
  destination_id: string
  filtered: number
  sampled_out: number
}

/** One call a destination's subscription or filters kept out (route/gates.ts). */
export interface GatedCall {
  destination_id: string
  verdict: 'filtered' | 'sampledOut'
}

/** Gated calls summed per destination, in destination order (a stable lock order). */
export function sumGatedCalls(calls: readonly GatedCall[]): GatedCountRow[] {
  const sums = new Map<string, GatedCountRow>()
  for (const { destination_id, verdict } of calls) {
    const row = sums.get(destination_id) ?? { destination_id, filtered: 0, sampled_out: 0 }
    if (verdict === 'filtered') row.filtered++
    else row.sampled_out++
    sums.set(destination_id, row)
  }
  return [...sums.values()].sort((a, b) => (a.destination_id < b.destination_id ? -1 : 1))
}

/** Fields left null are kept as they are. */
export interface DestinationChange {
  name: string | null
  enabled: boolean | null
  settings: string | null
  /** Given with `settings`, always (routingText of the same settings). */
  routing: string | null
  updatedAt: number
}

export interface DestinationsSql {
  /** The destination and its connections (unknown source ids are skipped), in one transaction. */
  insert(row: Omit<DestinationRow, 'enabled'> & { enabled: boolean }, sourceIds: string[]): Awaitable<void>
  list(): Awaitable<DestinationRow[]>
  get(id: string): Awaitable<DestinationRow | undefined>
  /** Of one destination, or of all; ordered by source id. */
  connections(destinationId?: string): Awaitable<ConnectionRow[]>
  /**
   * Updates the destination and, when `sourceIds` is given, replaces its connections, in one
   * transaction. False when there is no such destination.
   */
  update(id: string, change: DestinationChange, sourceIds: string[] | undefined): Awaitable<boolean>
  /** The destination with its connections, deliveries and attempts. */
  delete(id: string): Awaitable<boolean>
  /** Of one destination, or of every destination that has any. */
  gatedCounts(destinationId?: string): Awaitable<GatedCountRow[]>
  /** Sets the settings column to `to` if it still holds `from`; false otherwise. */
  replaceSettings(id: string, from: string, to: string): Awaitable<boolean>
}

/** Destinations with their connected source ids (in the order the connection rows come). */
/**
 * The routing column of a destination with these settings: its subscription and filters, which the
 * ingest transaction reads to decide which calls it gets (route/gates.ts). Kept apart from the
 * settings column because that one is sealed; neither member is a secret.
 */
export function routingText(settings: WebhooksSettings): string | null {
  if (settings.subscription === undefined && settings.filters === undefined) return null
  return JSON.stringify({ subscription: settings.subscription, filters: settings.filters })
}

export function toDestinations(rows: DestinationRow[], connections: ConnectionRow[]): Destination[] {
  const sourceIds = new Map<string, string[]>()
  for (const connection of connections) {
    const list = sourceIds.get(connection.destination_id)
    if (list) list.push(connection.source_id)
    else sourceIds.set(connection.destination_id, [connection.source_id])
  }
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    type: row.type as DestinationType,
    enabled: Boolean(row.enabled),
    sourceIds: sourceIds.get(row.id) ?? [],
    settings: JSON.parse(row.settings) as WebhooksSettings,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }))
}

/** The `settings` column: the settings as JSON text. */
export const settingsText = (settings: WebhooksSettings): string => JSON.stringify(settings)
