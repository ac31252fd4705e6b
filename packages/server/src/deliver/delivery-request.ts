/**
 * What a delivery sends, for people debugging it: the exact body bytes (the same for every attempt and
 * every URL, see deliver/shape.ts) and, per URL, the headers. They are rebuilt from the stored message
 * and the destination's current settings, which is what the next attempt or a replay would send. A
 * delivery in a batch shows its batch's request: the array of every member's message.
 */

import type { DeliveryStore } from '../domain/delivery-store.ts'
import type { WebhookMethod } from '../domain/destinations.ts'
import { NotFoundError } from '../domain/errors.ts'
import { requireDelivery, requireDestination } from '../domain/lookups.ts'
import type { MessageStore } from '../domain/message-store.ts'
import { RESERVED_HEADER_NAMES } from '../domain/webhook-settings.ts'
import { prepareBatchRequest, prepareRequest } from './fan-out.ts'
import { USER_AGENT } from './http-sender.ts'
import { SHOWN_SIGNATURE_HEADER_NAMES } from './signature-headers.ts'

export interface DeliveryRequest {
  method: WebhookMethod
  /** The body exactly as sent (UTF-8 JSON text). */
  body: string
  requests: {
    url: string
    /** The destination's static headers for this URL (the ones that may carry credentials). */
    staticHeaders: Record<string, string>
    /** The headers Sluice adds: User-Agent, Content-Type, and the signature headers when signed. */
    sluiceHeaders: Record<string, string>
  }[]
}

const RESERVED = new Set(RESERVED_HEADER_NAMES.map((name) => name.toLowerCase()))

export async function deliveryRequest(
  store: DeliveryStore & MessageStore,
  deliveryId: number,
): Promise<DeliveryRequest> {
  const delivery = await requireDelivery(store, deliveryId)
  const destination = await requireDestination(store, delivery.destinationId)
  const message = await store.getMessage(delivery.sourceId, delivery.messageId)
  if (message === null) {
    throw new NotFoundError(
      'message_not_found',
      `The message of delivery ${deliveryId} is no longer stored (retention removed it), so its request cannot be shown.`,
    )
  }
  const prepared =
    delivery.batchId === null
      ? prepareRequest(message.payload, destination.settings)
      : prepareBatchRequest(
          await store.batchPayloads(delivery.batchId),
          destination.settings,
          delivery.batchId,
        )
  const sluiceHeaders: Record<string, string> = {
    'User-Agent': USER_AGENT,
    'Content-Type': 'application/json',
  }
  const signatures = prepared.signatureHeaders
  for (let i = 0; i < signatures.length; i += 2) {
    const name = signatures[i]!
    sluiceHeaders[SHOWN_SIGNATURE_HEADER_NAMES[name] ?? name] = signatures[i + 1]!
  }
  return {
    method: prepared.method,
    body: prepared.body.toString('utf8'),
    requests: destination.settings.webhooks.map(({ url, headers }) => ({
      url,
      staticHeaders: Object.fromEntries(
        Object.entries(headers).filter(([name]) => !RESERVED.has(name.toLowerCase())),
      ),
      sluiceHeaders,
    })),
  }
}
