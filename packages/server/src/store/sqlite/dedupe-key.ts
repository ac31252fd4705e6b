/**
 * The dedupe key of a message on SQLite: a 53-bit hash of (source, messageId), held in an 8-byte
 * integer column and its index instead of indexing the two text columns. An index entry is ~12 bytes
 * instead of ~70, so a commit dirties a fraction of the index pages. A hash is not unique: the text is
 * compared on every hash hit, so a collision only costs a row read, never a wrong answer.
 *
 * The high 32 bits hash the source and the messageId without its last three characters; the low 21
 * bits hash the whole messageId. Ids that count up (`run-41`, `run-42`, …) share their prefix, so a
 * group commit's keys fall into a few narrow ranges of the index instead of one page each; random ids
 * (UUIDs) spread as any hash would. 53 bits, because a JavaScript number carries them exactly into and
 * out of SQLite without a BigInt.
 */
export function dedupeKey(sourceId: string, messageId: string): number {
  const split = Math.max(0, messageId.length - 3)
  let high = 0x811c9dc5
  for (let i = 0; i < sourceId.length; i++) high = Math.imul(high ^ sourceId.charCodeAt(i), 0x01000193)
  // The separator: ("ab", "c") and ("a", "bc") must not collide by construction.
  high = Math.imul(high ^ 0xffff, 0x01000193)
  for (let i = 0; i < split; i++) high = Math.imul(high ^ messageId.charCodeAt(i), 0x01000193)
  let low = Math.imul(high ^ messageId.length, 0x5bd1e995)
  for (let i = split; i < messageId.length; i++) low = Math.imul(low ^ messageId.charCodeAt(i), 0x5bd1e995)
  return (mix(high) >>> 0) * 0x200000 + (mix(low) >>> 11)
}

/** MurmurHash3's 32-bit finalizer: every input bit affects every output bit. */
function mix(h: number): number {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return h ^ (h >>> 16)
}
