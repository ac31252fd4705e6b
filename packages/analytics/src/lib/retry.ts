/** Statuses worth retrying: the server is overloaded, restarting or slow, not refusing the data. */
export function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429
}

/**
 * Delay before retry number `attempt` (1-based): exponential from `base`, capped at `max`, with
 * "equal jitter" (half fixed, half random) so clients that failed together do not retry together.
 */
export function backoff(
  attempt: number,
  base: number,
  max: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(max, base * 2 ** (attempt - 1))
  return Math.round(ceiling / 2 + random() * (ceiling / 2))
}

/** A `Retry-After` header (seconds or an HTTP date) in ms from `now`, or undefined when absent or invalid. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  // An HTTP date has a day and month name; without this, Date.parse('-3') is the year -3.
  if (!/[a-z]/i.test(trimmed)) return undefined
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}
