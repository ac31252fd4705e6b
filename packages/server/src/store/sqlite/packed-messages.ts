/**
 * Accepted messages cross from the HTTP thread to the store thread as one string and one transferred
 * buffer of numbers instead of an array of objects. Structured clone pays per object and per property
 * on the thread that sends — the busy HTTP thread — so a group of a few hundred messages cost more to
 * post than to validate; one flat string is a single copy, and the numbers move without a copy at all.
 */
import type { DestinationType } from '../../domain/destinations.ts'
import type { AcceptedMessage } from '../../domain/message-store.ts'
import type { MessageType } from '../../domain/messages.ts'

export interface PackedMessages {
  /**
   * Per message: sourceId, messageId, type, routeTo (comma-joined), payloadJson, userId and previousId
   * (empty when absent), back to back.
   */
  text: string
  /** Per message: the lengths of those seven strings, then receivedAt (epoch ms is exact in a float64). */
  numbers: Float64Array
}

/** Seven string lengths and receivedAt per message. */
const STRIDE = 8

/**
 * Built by appending to one string, not by joining an array of parts: V8 keeps the appends as a rope
 * that postMessage flattens once as it copies it, which measured ~5x cheaper than `join` for a group of
 * a few hundred messages (and no dearer to post).
 */
export function packMessages(messages: AcceptedMessage[]): PackedMessages {
  const numbers = new Float64Array(messages.length * STRIDE)
  let text = ''
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!
    const routeTo = message.routeTo.length === 1 ? message.routeTo[0]! : message.routeTo.join(',')
    const userId = message.userId ?? ''
    const previousId = message.previousId ?? ''
    text +=
      message.sourceId +
      message.messageId +
      message.type +
      routeTo +
      message.payloadJson +
      userId +
      previousId
    const at = i * STRIDE
    numbers[at] = message.sourceId.length
    numbers[at + 1] = message.messageId.length
    numbers[at + 2] = message.type.length
    numbers[at + 3] = routeTo.length
    numbers[at + 4] = message.payloadJson.length
    numbers[at + 5] = userId.length
    numbers[at + 6] = previousId.length
    numbers[at + 7] = message.receivedAt
  }
  return { text, numbers }
}

export function unpackMessages({ text, numbers }: PackedMessages): AcceptedMessage[] {
  const count = numbers.length / STRIDE
  const messages: AcceptedMessage[] = new Array(count)
  let offset = 0
  const next = (length: number) => {
    const start = offset
    offset += length
    return text.slice(start, offset)
  }
  for (let i = 0; i < count; i++) {
    const at = i * STRIDE
    const sourceId = next(numbers[at]!)
    const messageId = next(numbers[at + 1]!)
    const type = next(numbers[at + 2]!) as MessageType
    const routeTo = next(numbers[at + 3]!)
    const payloadJson = next(numbers[at + 4]!)
    const userId = next(numbers[at + 5]!)
    const previousId = next(numbers[at + 6]!)
    messages[i] = {
      sourceId,
      messageId,
      type,
      routeTo: routeTo === '' ? [] : (routeTo.split(',') as DestinationType[]),
      payloadJson,
      userId: userId === '' ? null : userId,
      previousId: previousId === '' ? null : previousId,
      receivedAt: numbers[at + 7]!,
    }
  }
  return messages
}
