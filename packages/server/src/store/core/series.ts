/** The figures-over-time area of the store core (domain/series-store.ts): per-minute rollups. */

import { floorMinute, type MinuteFigures, rollUpWindow, type SourceMinute } from '../../domain/series.ts'
import type { SeriesStore } from '../../domain/series-store.ts'
import type { RollupsSql } from '../tables/rollups.ts'

export class SeriesCore implements SeriesStore {
  readonly #sql: RollupsSql

  constructor(sql: RollupsSql) {
    this.#sql = sql
  }

  async rollUpDeliveries(now: number): Promise<number> {
    const window = rollUpWindow(now, (await this.#sql.through()) ?? (await this.#sql.earliestAttempt()))
    return window === null ? 0 : this.#sql.rollUp(window.from, window.to)
  }

  async deliveryMinutes(destinationId: string, from: number, to: number): Promise<MinuteFigures[]> {
    const start = floorMinute(from)
    // Before the first roll-up everything is read from the attempts themselves.
    const through = (await this.#sql.through()) ?? start
    const rolled = start < through ? await this.#sql.rows(destinationId, start, Math.min(to, through)) : []
    const live = to > through ? await this.#sql.live(destinationId, Math.max(start, through), to) : []
    return [...rolled, ...live]
  }

  async sourceMinutes(sourceId: string, from: number, to: number): Promise<SourceMinute[]> {
    return this.#sql.sourceMinutes(sourceId, floorMinute(from), to)
  }
}
