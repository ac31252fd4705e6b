import type { MessageType } from '../app/types.ts'
import { LIBRARY } from '../version.ts'
import { ValidationError } from './errors.ts'
import { utf8Length } from './utf8.ts'
import { isPlainObject, notAnObject, optionalObject } from './validate.ts'

// Messages are written as JSON text directly, member by member: about 1.6× faster per call than
// building an object and passing it to JSON.stringify, which the benchmark's enqueue rate shows.
// Only the caller's objects (traits, properties, context, integrations) go through JSON.stringify.
//
// The size limits count UTF-8 bytes exactly, and the writer counts them as it goes instead of
// measuring the finished text: a message built with `+` is a rope of a dozen pieces, and measuring
// it (Buffer.byteLength, TextEncoder) first copies it into one flat string, which cost as much as
// writing it (the batch's join copies it once anyway, see batch.ts). Every piece is ASCII (keys,
// type, timestamp, our messageIds, a caller's string checked to be plain printable ASCII), or a
// JSON text (a string JSON.stringify quoted, a stringified object) measured exactly; none starts or
// ends inside a surrogate pair, so the message's UTF-8 size is the sum of its pieces' sizes.

/** Strings JSON.stringify would write unchanged: no quote, backslash, control character or surrogate. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly the characters JSON escapes.
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/

/**
 * Whether `text` is printable ASCII but `"` and `\\`: JSON.stringify writes it unchanged, and it
 * is one UTF-8 byte a character. A loop, not a regular expression: about half the cost on the
 * short strings (ids, event names) it sees.
 */
function plainAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || code > 0x7e || code === 0x22 || code === 0x5c) return false
  }
  return true
}

/** `text` as a JSON string literal, exactly as JSON.stringify writes it. */
export function quote(text: string): string {
  return PLAIN.test(text) ? `"${text}"` : JSON.stringify(text)
}

/**
 * The UTF-8 bytes a JSON text takes beyond one per UTF-16 unit (0 for ASCII), so that its exact
 * size is `text.length` plus this. For a flat string (what JSON.stringify returns) `utf8Length` is
 * native and cheap where Buffer exists.
 */
function extraUtf8Bytes(text: string): number {
  return utf8Length(text) - text.length
}

/** A validated message, serialized once, with its exact size. */
export interface Serialized {
  readonly type: MessageType
  readonly messageId: string
  /** The message as JSON text, ready to join into a batch. */
  readonly json: string
  /** Exact UTF-8 size of `json`, as it goes on the wire. */
  readonly bytes: number
}

/** `,"context":{"library":…}}`: the end of a message whose call had no context. */
const LIBRARY_CONTEXT_END = `,"context":${JSON.stringify({ library: LIBRARY })}}`
const LIBRARY_CONTEXT_END_EXTRA = extraUtf8Bytes(LIBRARY_CONTEXT_END)

/** The start of each type's messages, up to the opening quote of a messageId of ours. */
const HEAD: Readonly<Record<MessageType, string>> = {
  identify: '{"type":"identify","messageId":"',
  track: '{"type":"track","messageId":"',
  page: '{"type":"page","messageId":"',
  screen: '{"type":"screen","messageId":"',
  group: '{"type":"group","messageId":"',
  alias: '{"type":"alias","messageId":"',
}

// Calls in the same millisecond share their timestamp string (isoNow), and so this member too.
let lastTimestamp = ''
let lastTimestampMember = ''

/** `,"timestamp":"…"`; an ISO timestamp never needs escaping and is ASCII. */
function timestampMember(timestamp: string): string {
  if (timestamp !== lastTimestamp) {
    lastTimestamp = timestamp
    lastTimestampMember = `,"timestamp":"${timestamp}"`
  }
  return lastTimestampMember
}

/**
 * Writes one message, member by member, counting its UTF-8 size. Used for one message only, and
 * it is the Serialized result itself once `end` has run (one allocation per call). Each `+` makes
 * a rope node that the batch's join walks later, so constants are written whole (a member's key
 * with the opening quote of its value, say) rather than piece by piece.
 */
export class MessageWriter implements Serialized {
  readonly type: MessageType
  readonly messageId: string
  json: string
  bytes = 0
  /** Bytes beyond one per UTF-16 unit in what is written so far. */
  private extra: number

  /**
   * Starts with `type` then `messageId`, always: readMessageId (batch.ts) finds the messageId by
   * that position. `generated`: the id is one of ours (uuid.ts), lowercase hex and dashes.
   */
  constructor(type: MessageType, messageId: string, generated: boolean, timestamp: string) {
    this.type = type
    this.messageId = messageId
    this.extra = 0
    if (generated) {
      this.json = `${HEAD[type]}${messageId}"`
    } else {
      this.json = `{"type":"${type}","messageId":`
      this.append(messageId)
    }
    this.json += timestampMember(timestamp)
  }

  /** `prefix` (`,"name":"`, the opening quote included) and the rest of the string, unless undefined. */
  string(prefix: string, value: string | undefined): void {
    if (value === undefined) return
    // The common case, tested on the caller's string so nothing is scanned twice: plain ASCII.
    if (plainAscii(value)) {
      this.json = `${this.json}${prefix}${value}"`
      return
    }
    this.json += prefix.slice(0, -1)
    this.append(value)
  }

  /** Appends `value` as a JSON string literal (as `quote` writes it) and counts its bytes. */
  private append(value: string): void {
    if (plainAscii(value)) {
      this.json += `"${value}"`
      return
    }
    const text = JSON.stringify(value)
    this.json += text
    this.extra += extraUtf8Bytes(text)
  }

  /**
   * `prefix` (`,"name":`) and the object serialized, unless undefined. Checks that the value is a
   * plain object and serializable; the ValidationError names the member.
   */
  object(prefix: string, value: unknown, call: string): void {
    const text = objectJson(prefix, value, call)
    if (text === undefined) return
    this.json += prefix + text
    this.extra += extraUtf8Bytes(text)
  }

  /** Writes the call's context with `context.library` added (one the caller set is kept) and closes the message. */
  end(context: unknown, call: string): Serialized {
    if (context === undefined) {
      this.json += LIBRARY_CONTEXT_END
      this.extra += LIBRARY_CONTEXT_END_EXTRA
    } else {
      const given = optionalObject(context, '.context', call)!
      this.object(',"context":', given.library === undefined ? { ...given, library: LIBRARY } : given, call)
      this.json += '}'
    }
    this.bytes = this.json.length + this.extra
    return this
  }
}

/** The object as JSON, or undefined when absent (or when a toJSON() returns undefined, as JSON.stringify leaves it out). */
function objectJson(prefix: string, value: unknown, call: string): string | undefined {
  if (value === undefined) return undefined
  // The field name is built on the error paths only: this runs for every member of every call.
  if (!isPlainObject(value)) throw notAnObject(value, fieldOf(prefix), call)
  try {
    return JSON.stringify(value)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new ValidationError(
      fieldOf(prefix),
      `${call}() ${fieldOf(prefix)} cannot be serialized as JSON: ${reason}`,
    )
  }
}

/** `.name` from a `,"name":` prefix, for error messages. */
function fieldOf(prefix: string): string {
  return `.${prefix.slice(2, -2)}`
}
