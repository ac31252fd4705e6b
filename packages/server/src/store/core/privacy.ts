/**
 * The privacy area of the store core (domain/privacy-store.ts): regulations and their progress, the
 * suppressions in force, and erasure in batches.
 */
import type {
  ErasureScope,
  ErasureStep,
  NewRegulation,
  PrivacyStore,
  RegulationListFilter,
  UnfinishedRegulation,
} from '../../domain/privacy-store.ts'
import {
  deletesData,
  type Regulation,
  type RegulationDestination,
  type RegulationStatus,
  type Suppression,
  suppressesCalls,
} from '../../domain/regulations.ts'
import { newId } from '../../lib/ids.ts'
import {
  type NotificationCountRow,
  type RegulationRow,
  type RegulationsSql,
  toErasureScope,
  toRegulation,
  toSuppression,
  toUnfinishedRegulation,
} from '../tables/regulations.ts'
import type { Changes } from './changes.ts'

/** Erases the profiles of these users (ProfileStore.eraseProfilesOfUsers). */
type ProfileEraser = (userIds: string[], sourceIds?: string[]) => Promise<number>

export class PrivacyCore implements PrivacyStore {
  readonly #sql: RegulationsSql
  readonly #changes: Changes
  readonly #eraseProfiles: ProfileEraser

  constructor(sql: RegulationsSql, changes: Changes, eraseProfiles: ProfileEraser) {
    this.#sql = sql
    this.#changes = changes
    this.#eraseProfiles = eraseProfiles
  }

  async createRegulation(input: NewRegulation): Promise<Regulation> {
    const now = Date.now()
    const deletes = deletesData(input.type)
    const row: RegulationRow = {
      id: newId('reg'),
      type: input.type,
      subject_ids: JSON.stringify(input.subjectIds),
      source_ids: input.sourceIds === null ? null : JSON.stringify(input.sourceIds),
      // Suppressing and lifting are done by the time the transaction commits.
      status: deletes ? 'INITIALIZED' : 'FINISHED',
      created_at: now,
      finished_at: deletes ? null : now,
      erasure_pending: deletes,
      erased_messages: 0,
      outcome: deletes ? null : '[]',
    }
    const queued = await this.#sql.create(row, {
      userIds: input.subjectIds,
      sourceIds: input.sourceIds,
      suppress: suppressesCalls(input.type),
      unsuppress: input.type === 'UNSUPPRESS',
      notify: deletes,
    })
    // Before the caller answers: every filter in this process knows of it, the engine has the deletes.
    this.#changes.committed('privacy')
    if (queued > 0) this.#changes.committed('deliveries')
    return (await this.getRegulation(row.id))!
  }

  async getRegulation(id: string): Promise<Regulation | null> {
    const row = await this.#sql.get(id)
    return row ? (await this.#withCounts([row], toRegulation))[0]! : null
  }

  async listRegulations(filter: RegulationListFilter): Promise<Regulation[]> {
    return this.#withCounts(await this.#sql.list(filter.status, filter.limit), toRegulation)
  }

  async listSuppressions(): Promise<Suppression[]> {
    return (await this.#sql.suppressions()).map(toSuppression)
  }

  async privacyVersion(): Promise<string> {
    const { n, newest } = await this.#sql.version()
    return `${n}:${newest ?? 0}`
  }

  async recentErasures(since: number): Promise<ErasureScope[]> {
    return (await this.#sql.recentErasures(since)).map(toErasureScope)
  }

  async eraseNext(limit: number, skip: readonly string[] = []): Promise<ErasureStep | null> {
    const step = await this.#sql.eraseNext(limit, skip)
    return step && { regulationId: step.id, erased: step.erased, done: step.done }
  }

  async eraseProfilesOfDeletions(): Promise<number> {
    const due = await this.#sql.profileErasuresDue()
    // One request's failure leaves it due (tried again next time) and holds up none of the others.
    const failures: unknown[] = []
    for (const row of due) {
      try {
        const { userIds, sourceIds } = toErasureScope(row)
        const erased = await this.#eraseProfiles(userIds, sourceIds ?? undefined)
        await this.#sql.recordErasedProfiles(row.id, erased)
      } catch (error) {
        failures.push(error)
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} profile erasures failed`)
    return due.length
  }

  async unfinishedRegulations(): Promise<UnfinishedRegulation[]> {
    return this.#withCounts(await this.#sql.unfinished(), toUnfinishedRegulation)
  }

  async setRegulationStatus(
    id: string,
    status: RegulationStatus,
    finished: { at: number; destinations: RegulationDestination[] } | null,
  ): Promise<void> {
    await this.#sql.setStatus(
      id,
      status,
      finished?.at ?? null,
      finished ? JSON.stringify(finished.destinations) : null,
    )
  }

  /** Each row mapped with its own notification counts (asked only for the regulations still open). */
  async #withCounts<T>(
    rows: RegulationRow[],
    map: (row: RegulationRow, counts: NotificationCountRow[]) => T,
  ): Promise<T[]> {
    const open = rows.filter((row) => row.outcome === null).map((row) => row.id)
    const counts = open.length > 0 ? await this.#sql.notificationCounts(open) : []
    return rows.map((row) =>
      map(
        row,
        counts.filter((count) => count.regulation_id === row.id),
      ),
    )
  }
}
