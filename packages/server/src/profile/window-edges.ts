/**
 * Time windows: a computed trait or an audience condition over the last N days changes as time passes,
 * with no call at all. Every so often (the profile worker's refresh) the profiles whose calls crossed
 * a window's edge since the last check are queued for evaluation again.
 */
import { eventLeaves } from '../domain/audiences.ts'
import type { ComputationsSql } from '../store/tables/computations.ts'
import { activeComputations, audienceDefinitions } from './computations.ts'

/**
 * Queues the profiles a time window's edge passed between `after` and `upTo`: their oldest calls may
 * have left a computed trait's or an audience condition's window. Returns how many were queued. A
 * window whose profiles cannot be read holds up none of the others: every other is queued, then the
 * failures are thrown together (the worker tries again at its next refresh).
 */
export async function queueWindowEdges(sql: ComputationsSql, after: number, upTo: number): Promise<number> {
  const DAY_MS = 86_400_000
  const computations = activeComputations(await sql.list())
  const definitions = computations.references ?? audienceDefinitions(computations.audiences)
  const failures: unknown[] = []
  const windows = [
    ...computations.traits.map((trait) => ({ event: trait.event, withinDays: trait.withinDays })),
    ...computations.audiences.flatMap((audience) => {
      try {
        return eventLeaves(audience.definition, definitions)
      } catch (error) {
        failures.push(error)
        return []
      }
    }),
  ]
  const queued = new Set<string>()
  for (const { event, withinDays } of windows) {
    if (withinDays === null) continue
    const window = withinDays * DAY_MS
    try {
      for (const id of await sql.profilesWithEventsBetween(event, after - window, upTo - window))
        queued.add(id)
    } catch (error) {
      failures.push(error)
    }
  }
  if (queued.size > 0) await sql.markDirty([...queued])
  if (failures.length > 0)
    throw new AggregateError(failures, `${failures.length} time windows not re-checked`)
  return queued.size
}
