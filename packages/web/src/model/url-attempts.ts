/**
 * What a destination's recent deliveries say about each of its URLs. Plain TypeScript: unit-tested under
 * Node (packages/web/test).
 */
import type { Delivery } from '@sluice/server/api'

/** What the recent attempts to one URL say. */
export interface UrlAttempts {
  attempts: number
  failures: number
  lastError: string | null
  lastAt: string | null
}

/** Per URL, over the destination's most recent deliveries: attempts, failures and the last error. */
export function attemptsByUrl(deliveries: readonly Delivery[]): Map<string, UrlAttempts> {
  const byUrl = new Map<string, UrlAttempts>()
  for (const delivery of deliveries) {
    for (const attempt of delivery.attempts) {
      const counts = byUrl.get(attempt.url) ?? { attempts: 0, failures: 0, lastError: null, lastAt: null }
      counts.attempts++
      const ok = attempt.statusCode !== null && attempt.statusCode < 300
      if (!ok) counts.failures++
      if (counts.lastAt === null || attempt.attemptedAt > counts.lastAt) {
        counts.lastAt = attempt.attemptedAt
        counts.lastError = ok ? null : (attempt.errorText ?? `HTTP ${attempt.statusCode ?? 'no answer'}`)
      }
      byUrl.set(attempt.url, counts)
    }
  }
  return byUrl
}
