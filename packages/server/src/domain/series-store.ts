/**
 * What the charts ask of storage: delivery figures and source calls per minute. One area of the store
 * contract (store/store.ts, with its conventions); the store implements it in store/core/series.ts.
 */
import type { MinuteFigures, SourceMinute } from './series.ts'

export interface SeriesStore {
  /**
   * Rolls complete minutes of attempts up into per-minute figures (the span `rollUpWindow` gives, in
   * series.ts; the housekeeper calls it every minute). Safe to run by several processes at once.
   * Returns rows written.
   */
  rollUpDeliveries(now: number): Promise<number>
  /** A destination's figures per minute in `[from, to)`: rolled up, plus the minutes not rolled up yet. */
  deliveryMinutes(destinationId: string, from: number, to: number): Promise<MinuteFigures[]>
  /** Calls a source stored per minute (by the minute they were received) in `[from, to)`; quiet minutes are left out. */
  sourceMinutes(sourceId: string, from: number, to: number): Promise<SourceMinute[]>
}
