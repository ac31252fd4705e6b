interface WebCrypto {
  getRandomValues(array: Uint8Array): Uint8Array
}

const webCrypto = (globalThis as { crypto?: WebCrypto }).crypto

/** UUIDs' worth of entropy drawn at once: one `getRandomValues` call per 256 ids. */
const POOL_IDS = 256
const pool = new Uint8Array(POOL_IDS * 16)
let next = pool.length

/** ASCII codes of the hex digits. */
const HEX = [48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102]

/** Two hex digits of a byte, high nibble first, as char codes. */
const hi = (byte: number): number => HEX[byte >> 4]!
const lo = (byte: number): number => HEX[byte & 15]!

/**
 * A random RFC 4122 version 4 UUID (lowercase), used as the default `messageId`: 122 random bits
 * from `crypto.getRandomValues` (the platform's CSPRNG). Entropy is drawn for 256 ids at a time,
 * as Node's own `crypto.randomUUID` does for 128 (its default entropy cache), and each id is written
 * as one flat string: about half the cost of `randomUUID` per call, which counts at enqueue.
 */
export function uuid(): string {
  if (next === pool.length) {
    webCrypto!.getRandomValues(pool)
    next = 0
  }
  const b = pool
  const i = next
  next += 16
  // Each byte is used once; the version (4) and variant (10xx) bits are forced as RFC 4122 says.
  const b6 = (b[i + 6]! & 0x0f) | 0x40
  const b8 = (b[i + 8]! & 0x3f) | 0x80
  return String.fromCharCode(
    hi(b[i]!),
    lo(b[i]!),
    hi(b[i + 1]!),
    lo(b[i + 1]!),
    hi(b[i + 2]!),
    lo(b[i + 2]!),
    hi(b[i + 3]!),
    lo(b[i + 3]!),
    45,
    hi(b[i + 4]!),
    lo(b[i + 4]!),
    hi(b[i + 5]!),
    lo(b[i + 5]!),
    45,
    hi(b6),
    lo(b6),
    hi(b[i + 7]!),
    lo(b[i + 7]!),
    45,
    hi(b8),
    lo(b8),
    hi(b[i + 9]!),
    lo(b[i + 9]!),
    45,
    hi(b[i + 10]!),
    lo(b[i + 10]!),
    hi(b[i + 11]!),
    lo(b[i + 11]!),
    hi(b[i + 12]!),
    lo(b[i + 12]!),
    hi(b[i + 13]!),
    lo(b[i + 13]!),
    hi(b[i + 14]!),
    lo(b[i + 14]!),
    hi(b[i + 15]!),
    lo(b[i + 15]!),
  )
}
