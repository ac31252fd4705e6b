/**
 * Reads of one record by id that refuse a missing one with the domain's `NotFoundError`, so every
 * operation names a missing resource the same way.
 */

import { type Delivery, deliveryNotFound } from './deliveries.ts'
import type { DeliveryStore } from './delivery-store.ts'
import { type Destination, destinationNotFound } from './destinations.ts'
import type { SourceStore } from './source-store.ts'
import { type Source, sourceNotFound } from './sources.ts'

export async function requireSource(store: SourceStore, id: string): Promise<Source> {
  const source = await store.getSource(id)
  if (source === null) throw sourceNotFound(id)
  return source
}

export async function requireDestination(store: DeliveryStore, id: string): Promise<Destination> {
  const destination = await store.getDestination(id)
  if (destination === null) throw destinationNotFound(id)
  return destination
}

export async function requireDelivery(store: DeliveryStore, id: number): Promise<Delivery> {
  const delivery = await store.getDelivery(id)
  if (delivery === null) throw deliveryNotFound(id)
  return delivery
}
