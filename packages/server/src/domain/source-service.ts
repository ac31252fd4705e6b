/**
 * What can be done with sources, for every caller (management API, CLI): names are cleaned and
 * checked here, and every answer carries the source's counters.
 */

import { requireSource } from './lookups.ts'
import { cleanName } from './names.ts'
import { checkSeriesRange, type SourceSeriesPoint, toSourceSeries } from './series.ts'
import type { SeriesStore } from './series-store.ts'
import type { SourcePatch, SourceStore } from './source-store.ts'
import { NO_TRAFFIC_YET, type Source, type SourceStats, sourceNotFound } from './sources.ts'

export interface SourceWithStats {
  source: Source
  stats: SourceStats
}

export interface NewSourceInput {
  /** Surrounding whitespace is removed; see `cleanName`. */
  name: string
  /** Whether the source accepts Tracking API calls at once. Default true. */
  enabled?: boolean
}

export interface SourceChanges {
  name?: string
  enabled?: boolean
  /** When true, a new write key replaces the old one, which stops working at once. Default false. */
  rotateWriteKey?: boolean
}

export class SourceService {
  private readonly store: SourceStore & SeriesStore

  constructor(store: SourceStore & SeriesStore) {
    this.store = store
  }

  async create({ name, enabled = true }: NewSourceInput): Promise<SourceWithStats> {
    const source = await this.store.createSource({ name: cleanName(name), enabled })
    return { source, stats: NO_TRAFFIC_YET }
  }

  /** Every source, oldest first. */
  async list(): Promise<SourceWithStats[]> {
    const sources = await this.store.listSources()
    return Promise.all(sources.map((source) => this.withStats(source)))
  }

  async get(id: string): Promise<SourceWithStats> {
    return this.withStats(await requireSource(this.store, id))
  }

  /** Changes only what `changes` gives. */
  async update(id: string, { name, enabled, rotateWriteKey }: SourceChanges): Promise<SourceWithStats> {
    const patch: SourcePatch = {}
    if (name !== undefined) patch.name = cleanName(name)
    if (enabled !== undefined) patch.enabled = enabled
    if (rotateWriteKey === true) patch.rotateWriteKey = true
    const source = await this.store.updateSource(id, patch)
    if (source === null) throw sourceNotFound(id)
    return this.withStats(source)
  }

  /** Replaces the write key; the old one stops authenticating at once. */
  async rotateWriteKey(id: string): Promise<SourceWithStats> {
    return this.update(id, { rotateWriteKey: true })
  }

  /** Calls the source stored per `step` ms over `[from, to)`; steps start at `from` taken down to the minute. */
  async series(id: string, from: number, to: number, step: number): Promise<SourceSeriesPoint[]> {
    checkSeriesRange(from, to, step)
    from = Math.floor(from / 60_000) * 60_000
    await requireSource(this.store, id)
    return toSourceSeries(await this.store.sourceMinutes(id, from, to), from, to, step)
  }

  /** Deletes the source, its connections to destinations, and its stored messages and deliveries. */
  async delete(id: string): Promise<void> {
    if (!(await this.store.deleteSource(id))) throw sourceNotFound(id)
  }

  private async withStats(source: Source): Promise<SourceWithStats> {
    return { source, stats: await this.store.getSourceStats(source.id) }
  }
}
