/** Measuring how deeply parsed JSON nests, without risking the call stack on hostile input. */

/**
 * True when `value` nests objects and arrays more than `limit` levels deep (a bare object or array is
 * 1 level). The walk stops descending at the limit, so it recurses at most `limit` frames deep however
 * deeply the value is nested. It runs on every accepted message, so it allocates nothing.
 */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  return value !== null && typeof value === 'object' && deeperThan(value, limit)
}

function deeperThan(node: object, levelsLeft: number): boolean {
  if (levelsLeft < 1) return true
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const child: unknown = node[i]
      if (child !== null && typeof child === 'object' && deeperThan(child, levelsLeft - 1)) return true
    }
    return false
  }
  // Parsed JSON: plain objects whose keys are all own and enumerable.
  for (const key in node) {
    const child: unknown = (node as Record<string, unknown>)[key]
    if (child !== null && typeof child === 'object' && deeperThan(child, levelsLeft - 1)) return true
  }
  return false
}
