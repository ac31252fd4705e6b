/**
 * What can be done with regulations, for every caller (management API, CLI): the request is checked
 * here (user ids, sources), then recorded by the store, which does everything a `201` promises in the
 * same transaction.
 */

import { ValidationError } from './errors.ts'
import type { PrivacyStore } from './privacy-store.ts'
import {
  REGULATION_PAGE_SIZE,
  type Regulation,
  type RegulationStatus,
  type RegulationType,
  regulationNotFound,
  SUBJECT_IDS_MAX,
  type Suppression,
} from './regulations.ts'
import type { SourceStore } from './source-store.ts'

export interface NewRegulationInput {
  regulationType: RegulationType
  /** 1 to 5,000 user ids; repeats count once. */
  subjectIds: string[]
  /** Limits the request to these sources. Default: every source. */
  sourceIds?: string[] | undefined
}

export interface RegulationServiceOptions {
  /**
   * Awaited after a regulation is recorded and before it is returned: the caller's own process then
   * already honours it (the Tracking API's filter reloads). Default: nothing.
   */
  afterCreate?: (regulation: Regulation) => Promise<void>
}

export class RegulationService {
  private readonly store: PrivacyStore & SourceStore
  private readonly afterCreate: (regulation: Regulation) => Promise<void>

  constructor(store: PrivacyStore & SourceStore, options: RegulationServiceOptions = {}) {
    this.store = store
    this.afterCreate = options.afterCreate ?? (async () => {})
  }

  async create(input: NewRegulationInput): Promise<Regulation> {
    const subjectIds = checkSubjectIds(input.subjectIds)
    const sourceIds = input.sourceIds === undefined ? null : await this.checkSources(input.sourceIds)
    const regulation = await this.store.createRegulation({
      type: input.regulationType,
      subjectIds,
      sourceIds,
    })
    await this.afterCreate(regulation)
    return regulation
  }

  /** Newest first. */
  async list(filter: { status?: RegulationStatus; limit?: number } = {}): Promise<Regulation[]> {
    const { status, limit = REGULATION_PAGE_SIZE.default } = filter
    // The schema's maximum does not catch every number JSON can spell (1e309 parses as Infinity).
    if (!Number.isInteger(limit) || limit < 1 || limit > REGULATION_PAGE_SIZE.max) {
      throw new ValidationError(
        '/limit',
        `limit must be a whole number from 1 to ${REGULATION_PAGE_SIZE.max}; got ${limit}.`,
      )
    }
    return this.store.listRegulations({ ...(status ? { status } : {}), limit })
  }

  async get(id: string): Promise<Regulation> {
    const regulation = await this.store.getRegulation(id)
    if (regulation === null) throw regulationNotFound(id)
    return regulation
  }

  async suppressions(): Promise<Suppression[]> {
    return this.store.listSuppressions()
  }

  private async checkSources(sourceIds: string[]): Promise<string[]> {
    if (sourceIds.length === 0) {
      throw new ValidationError(
        '/sourceIds',
        '"sourceIds" is empty: name at least one source, or leave it out to cover every source.',
      )
    }
    const known = new Set((await this.store.listSources()).map((source) => source.id))
    const unique = [...new Set(sourceIds)]
    const unknown = unique.findIndex((id) => !known.has(id))
    if (unknown >= 0) {
      throw new ValidationError(
        `/sourceIds/${sourceIds.indexOf(unique[unknown]!)}`,
        `No source has id "${unique[unknown]}". List the existing sources with GET /api/v1/sources.`,
      )
    }
    return unique
  }
}

/** 1 to 5,000 non-blank ids, repeats dropped. */
function checkSubjectIds(subjectIds: string[]): string[] {
  if (subjectIds.length === 0) {
    throw new ValidationError('/subjectIds', '"subjectIds" is empty: name at least one user id.')
  }
  if (subjectIds.length > SUBJECT_IDS_MAX) {
    throw new ValidationError(
      '/subjectIds',
      `"subjectIds" has ${subjectIds.length} ids; at most ${SUBJECT_IDS_MAX} are allowed per request. Split it into several requests.`,
    )
  }
  const blank = subjectIds.findIndex((id) => id.trim() === '')
  if (blank >= 0) {
    throw new ValidationError(
      `/subjectIds/${blank}`,
      'A user id is blank: give the userId the calls carried.',
    )
  }
  return [...new Set(subjectIds)]
}
