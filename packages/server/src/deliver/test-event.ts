/**
 * The test send: a sample track call sent to every URL of a destination now, signed like a real
 * delivery but outside the delivery records (nothing is recorded, nothing retried). Disabled
 * destinations can be tested too: that is when people check a new endpoint.
 */
import packageJson from '../../package.json' with { type: 'json' }
import type { DeliveryStore } from '../domain/delivery-store.ts'
import type { Destination } from '../domain/destinations.ts'
import { requireDestination } from '../domain/lookups.ts'
import { newMessageId } from '../lib/ids.ts'
import type { AttemptResult } from './http-sender.ts'
import { isSuccess } from './retry-policy.ts'

/** Who the sample call is from and what it is called, as documented, so a receiver can tell it apart. */
export const TEST_EVENT = { userId: 'sluice-test', event: 'Sluice Test Event' } as const

/** A stored (enriched) call; the test send reports its `messageId`. */
export interface TestMessage extends Record<string, unknown> {
  messageId: string
}

/** The sample call, already in stored (enriched) form. */
export function testMessage(now: number): TestMessage {
  return {
    type: 'track',
    userId: TEST_EVENT.userId,
    event: TEST_EVENT.event,
    properties: {},
    context: { library: { name: 'sluice', version: packageJson.version } },
    messageId: newMessageId(),
    timestamp: new Date(now).toISOString(),
  }
}

export interface TestSendResult {
  /** True when some URL answered 2xx. */
  ok: boolean
  /** The sample call's `messageId`, to find it at the receiver. */
  messageId: string
  /** What each URL answered. */
  results: AttemptResult[]
}

/** Sends a message to every URL of a destination now, signed like a delivery, outside the records (the delivery engine does). */
export interface TestSender {
  sendTest(destination: Destination, payload: Record<string, unknown>): Promise<AttemptResult[]>
}

export interface TestEventServiceOptions {
  store: DeliveryStore
  /** Sends like a real delivery: the delivery engine. */
  sender: TestSender
}

export class TestEventService {
  private readonly store: DeliveryStore
  private readonly sender: TestSender

  constructor({ store, sender }: TestEventServiceOptions) {
    this.store = store
    this.sender = sender
  }

  async send(destinationId: string): Promise<TestSendResult> {
    const destination = await requireDestination(this.store, destinationId)
    const message = testMessage(Date.now())
    const results = await this.sender.sendTest(destination, message)
    return {
      ok: results.some(isSuccess),
      messageId: message.messageId,
      results,
    }
  }
}
