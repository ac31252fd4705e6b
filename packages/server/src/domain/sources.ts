import { NotFoundError } from './errors.ts'

/**
 * Sources: where calls come from. Each has a write key that authenticates its Tracking API calls.
 */

export interface Source {
  id: string
  name: string
  writeKey: string
  enabled: boolean
  createdAt: number
}

export interface SourceStats {
  /**
   * Messages accepted: stored and routed, or withheld because a deletion request made after they were
   * received had committed before they were (as if stored and erased at once).
   */
  accepted: number
  /** Messages dropped because the same messageId came from this source within the dedupe window. */
  duplicates: number
  /** Messages refused by per-message validation. */
  rejected: number
  /** Messages acknowledged and dropped because their user is suppressed (privacy). */
  suppressed: number
}

/** The counters of a source that has received nothing yet. */
export const NO_TRAFFIC_YET: Readonly<SourceStats> = Object.freeze({
  accepted: 0,
  duplicates: 0,
  rejected: 0,
  suppressed: 0,
})

export function sourceNotFound(id: string): NotFoundError {
  return new NotFoundError(
    'source_not_found',
    `No source has id "${id}". List the existing sources with GET /api/v1/sources.`,
  )
}
