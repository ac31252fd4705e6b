// The calls a delivery backlog is made of: one track call each, with the same body every delivery
// benchmark sends (raw-post.ts sends one of the same shape), so rates compare like with like.
import type { AcceptedMessage } from '@sluice/server'

/** The stored JSON of backlog call `messageId`, received at `iso`. */
export function backlogPayload(messageId: string, iso: string): string {
  return JSON.stringify({
    type: 'track',
    messageId,
    userId: 'bench-user',
    event: 'Order Completed',
    properties: { total: 12.5, currency: 'EUR', items: 3 },
    context: { library: { name: 'bench' }, ip: '127.0.0.1' },
    timestamp: iso,
    receivedAt: iso,
  })
}

/** Calls `drain-<from>` … `drain-<to − 1>` of a source, received at `now`, routed to Webhooks. */
export function backlogMessages(sourceId: string, from: number, to: number, now: number): AcceptedMessage[] {
  const iso = new Date(now).toISOString()
  const messages: AcceptedMessage[] = []
  for (let i = from; i < to; i++) {
    const messageId = `drain-${i}`
    messages.push({
      sourceId,
      messageId,
      type: 'track',
      receivedAt: now,
      routeTo: ['webhooks'],
      payloadJson: backlogPayload(messageId, iso),
    })
  }
  return messages
}
