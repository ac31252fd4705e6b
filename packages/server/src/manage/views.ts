/**
 * How stored resources look through the management API: ISO 8601 times, and destination settings
 * without the shared secret (only whether one is set).
 */
import type { Destination, Source, SourceStats } from '../store/store.ts'

export interface SourceView {
  id: string
  name: string
  writeKey: string
  enabled: boolean
  createdAt: string
  stats: SourceStats
}

export interface DestinationView {
  id: string
  name: string
  type: Destination['type']
  enabled: boolean
  sourceIds: string[]
  settings: {
    webhooks: Array<{ url: string; headers: Record<string, string> }>
    sharedSecretSet: boolean
  }
  createdAt: string
  updatedAt: string
}

export function sourceView(source: Source, stats: SourceStats): SourceView {
  return {
    id: source.id,
    name: source.name,
    writeKey: source.writeKey,
    enabled: source.enabled,
    createdAt: new Date(source.createdAt).toISOString(),
    stats: { accepted: stats.accepted, duplicates: stats.duplicates, rejected: stats.rejected },
  }
}

export function destinationView(destination: Destination): DestinationView {
  return {
    id: destination.id,
    name: destination.name,
    type: destination.type,
    enabled: destination.enabled,
    sourceIds: [...destination.sourceIds],
    settings: {
      webhooks: destination.settings.webhooks.map(({ url, headers }) => ({ url, headers: { ...headers } })),
      sharedSecretSet: destination.settings.sharedSecret !== null,
    },
    createdAt: new Date(destination.createdAt).toISOString(),
    updatedAt: new Date(destination.updatedAt).toISOString(),
  }
}
