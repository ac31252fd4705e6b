let lastMs = Number.NaN
let lastIso = ''

/**
 * The current time as an ISO 8601 string. `toISOString` is costly next to the rest of a call, and
 * many calls land in the same millisecond, so the last string is reused within it.
 */
export function isoNow(): string {
  const ms = Date.now()
  if (ms !== lastMs) {
    lastMs = ms
    lastIso = new Date(ms).toISOString()
  }
  return lastIso
}
