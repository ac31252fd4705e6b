/**
 * Regulations: a request to forget users (erase their stored data and tell their destinations with a
 * `delete` notification), to stop accepting their calls (suppression), or to lift a suppression.
 * Requests, their progress and the suppressions in force are kept by the store; the rules about what
 * a request may contain are in regulation-service.ts.
 */
import { NotFoundError } from './errors.ts'

export const REGULATION_TYPES = [
  'DELETE_ONLY',
  'SUPPRESS_ONLY',
  'SUPPRESS_WITH_DELETE',
  'UNSUPPRESS',
] as const
export type RegulationType = (typeof REGULATION_TYPES)[number]

export const REGULATION_STATUSES = [
  'INITIALIZED',
  'RUNNING',
  'FINISHED',
  'PARTIAL_SUCCESS',
  'FAILED',
] as const
export type RegulationStatus = (typeof REGULATION_STATUSES)[number]

/** The only kind of subject: users named by their `userId`. */
export const SUBJECT_TYPE = 'USER_ID'

/** User ids one request may name. */
export const SUBJECT_IDS_MAX = 5_000

/** Whether a request of this type erases data and sends `delete` notifications. */
export const deletesData = (type: RegulationType): boolean =>
  type === 'DELETE_ONLY' || type === 'SUPPRESS_WITH_DELETE'

/** Whether a request of this type suppresses later calls of its users. */
export const suppressesCalls = (type: RegulationType): boolean =>
  type === 'SUPPRESS_ONLY' || type === 'SUPPRESS_WITH_DELETE'

/** The `delete` notifications of one destination. */
export interface RegulationDestination {
  destinationId: string
  status: RegulationStatus
  delivered: number
  failed: number
}

export interface Regulation {
  id: string
  regulationType: RegulationType
  subjectType: typeof SUBJECT_TYPE
  subjectIds: string[]
  /** The sources it applies to; null for every source. */
  sourceIds: string[] | null
  status: RegulationStatus
  createdAt: number
  finishedAt: number | null
  destinations: RegulationDestination[]
  erased: { messages: number; profiles: number }
}

/** A user id suppressed now, in one source or (sourceId null) in every source. */
export interface Suppression {
  userId: string
  sourceId: string | null
  regulationId: string
  createdAt: number
}

/** How many regulations one page of a listing holds. */
export const REGULATION_PAGE_SIZE = { default: 50, max: 500 } as const

export function regulationNotFound(id: string): NotFoundError {
  return new NotFoundError(
    'regulation_not_found',
    `No regulation has id "${id}". List the existing regulations with GET /api/v1/regulations.`,
  )
}
