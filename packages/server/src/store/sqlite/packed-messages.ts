/**
 * Accepted messages cross from the HTTP thread to the store thread as one string and one transferred
 * buffer of numbers instead of an array of objects. Structured clone pays per object and per property
 * on the thread that sends — the busy HTTP thread — so a group of a few hundred messages cost more to
 * post than to validate; one flat string is a single copy, and the numbers move without a copy at all.
 */
import type { DestinationType } from '../../domain/destinations.ts'
import type { MessageType } from '../../domain/messages.ts'
import type { AcceptedMessage } from '../store.ts'

export interface PackedMessages {
  /**
   * Per message: sourceId, messageId, type, routeTo (comma-joined), payloadJson, userId and previousId
   * (empty when absent), back to back.
   */
  text: string
  /** Per message: the lengths of those seven strings, then receivedAt (epoch ms is exact in a float64). */
  numbers: Float64Array
}

const FIELDS = 7
const STRIDE = FIELDS + 1

export function packMessages(messages: AcceptedMessage[]): PackedMessages {
  const numbers = new Float64Array(messages.length * STRIDE)
  const parts: string[] = new Array(messages.length * FIELDS)
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!
    const routeTo = message.routeTo.length === 1 ? message.routeTo[0]! : message.routeTo.join(',')
    const at = i * STRIDE
    const p = i * FIELDS
    parts[p] = message.sourceId
    parts[p + 1] = message.messageId
    parts[p + 2] = message.type
    parts[p + 3] = routeTo
    parts[p + 4] = message.payloadJson
    parts[p + 5] = message.userId ?? ''
    parts[p + 6] = message.previousId ?? ''
    numbers[at] = message.sourceId.length
    numbers[at + 1] = message.messageId.length
    numbers[at + 2] = message.type.length
    numbers[at + 3] = routeTo.length
    numbers[at + 4] = message.payloadJson.length
    numbers[at + 5] = parts[p + 5]!.length
    numbers[at + 6] = parts[p + 6]!.length
    numbers[at + 7] = message.receivedAt
  }
  return { text: parts.join(''), numbers }
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
