/**
 * What privacy asks of storage: regulations (deletion and suppression requests) and their progress,
 * the suppressions in force, and erasure in batches. One area of the store contract (store/store.ts,
 * with its conventions); the store implements it in store/core/privacy.ts.
 */
import type { DestinationNotifications } from './regulation-status.ts'
import type {
  Regulation,
  RegulationDestination,
  RegulationStatus,
  RegulationType,
  Suppression,
} from './regulations.ts'

export interface NewRegulation {
  type: RegulationType
  /** 1 to 5,000 distinct user ids (the service checks). */
  subjectIds: string[]
  /** Existing source ids, or null for every source. */
  sourceIds: string[] | null
}

/** Newest first. */
export interface RegulationListFilter {
  status?: RegulationStatus
  limit: number
}

/** The calls a deletion request erases: its users' messages in its sources, received up to its creation. */
export interface ErasureScope {
  regulationId: string
  userIds: string[]
  sourceIds: string[] | null
  createdAt: number
}

/**
 * Whether a deletion request's erasure covers a call of `sourceId` received at `receivedAt` by one of
 * its users: it erases every call received up to its creation, in its sources.
 */
export const erasureCovers = (scope: ErasureScope, sourceId: string, receivedAt: number): boolean =>
  receivedAt <= scope.createdAt && (scope.sourceIds === null || scope.sourceIds.includes(sourceId))

/**
 * Which of these calls, being committed now, a deletion request already committed erases: calls
 * received before the request whose commit came after it (the request's erasure scan could not see
 * them). Ingest withholds them, as if they had been stored and erased at once. Null when none.
 */
export function erasedOnArrival(
  erasures: readonly ErasureScope[],
  calls: readonly {
    sourceId: string
    receivedAt: number
    userId?: string | null
    previousId?: string | null
  }[],
): Set<number> | null {
  if (erasures.length === 0) return null
  const erased = new Set<number>()
  for (let index = 0; index < calls.length; index++) {
    const call = calls[index]!
    const covered = erasures.some(
      (scope) =>
        erasureCovers(scope, call.sourceId, call.receivedAt) &&
        ((call.userId != null && scope.userIds.includes(call.userId)) ||
          (call.previousId != null && scope.userIds.includes(call.previousId))),
    )
    if (covered) erased.add(index)
  }
  return erased.size > 0 ? erased : null
}

/** One request's erasure batch failed (rolled back); `cause` says why. */
export class ErasureFailed extends Error {
  readonly regulationId: string
  /** The cause's SQLSTATE, if any, so a rolled-back transaction can still be recognised as such. */
  readonly code: string | undefined

  constructor(regulationId: string, cause: unknown) {
    super(
      `erasing the messages of ${regulationId} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    )
    this.name = 'ErasureFailed'
    this.regulationId = regulationId
    this.code = (cause as { code?: string } | null)?.code
  }
}

/** The regulation whose erasure batch failed, when `error` is an `ErasureFailed` (also one carried across threads). */
export function failedErasure(error: unknown): string | null {
  const { name, regulationId } = (error ?? {}) as { name?: unknown; regulationId?: unknown }
  return name === 'ErasureFailed' && typeof regulationId === 'string' ? regulationId : null
}

/** One batch of erasure, committed. */
export interface ErasureStep {
  regulationId: string
  /** Messages erased by this batch (with their deliveries and attempts). */
  erased: number
  /** True when nothing of the request is left to erase. */
  done: boolean
}

/** A regulation not finished yet, with what its status is judged by (regulation-status.ts). */
export interface UnfinishedRegulation {
  id: string
  /** As stored. */
  status: RegulationStatus
  /** Some of its messages are still to be erased. */
  erasurePending: boolean
  /** Its `delete` notifications, counted by destination and delivery status now. */
  notifications: DestinationNotifications[]
}

export interface PrivacyStore {
  /**
   * Records a regulation and does, in the same transaction, everything that must hold once it is
   * acknowledged: suppressions added or lifted; for a deletion, the unsent deliveries of the users'
   * messages cancelled, and one `delete` notification per user queued for every enabled Webhooks
   * destination connected to a source the user sent calls to (delete-notifications.ts); the erasure
   * itself left to `eraseNext`.
   */
  createRegulation(input: NewRegulation): Promise<Regulation>
  getRegulation(id: string): Promise<Regulation | null>
  listRegulations(filter: RegulationListFilter): Promise<Regulation[]>
  /** The suppressions in force, by user id. */
  listSuppressions(): Promise<Suppression[]>
  /**
   * Changes whenever a regulation is created (cheap to ask): a process that holds the suppressions in
   * memory polls it and reloads them only when it changed.
   */
  privacyVersion(): Promise<string>
  /** Deletion requests created since `since` or still erasing: what claimed deliveries are checked against. */
  recentErasures(since: number): Promise<ErasureScope[]>
  /**
   * Erases up to `limit` messages of the oldest deletion request with erasure left, but those in
   * `skip` (one transaction; on PostgreSQL a request another process is erasing right now is passed
   * over). Null when none is left. A failure of one request's batch is an `ErasureFailed` naming it.
   */
  eraseNext(limit: number, skip?: readonly string[]): Promise<ErasureStep | null>
  /**
   * Erases the profiles of the users of deletion requests whose messages are all erased (so the
   * profile worker cannot rebuild them), and records how many went. Returns how many requests it did.
   */
  eraseProfilesOfDeletions(): Promise<number>
  /** Regulations not finished, oldest first. */
  unfinishedRegulations(): Promise<UnfinishedRegulation[]>
  /**
   * Records a regulation's new status. `finished` when the status is final: when it finished, and its
   * destinations' shares frozen as they are (retention may later remove the notifications they are
   * counted from).
   */
  setRegulationStatus(
    id: string,
    status: RegulationStatus,
    finished: { at: number; destinations: RegulationDestination[] } | null,
  ): Promise<void>
}
