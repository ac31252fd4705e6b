/**
 * Configuration as code's one transaction (domain/config-store.ts): no table of its own, the writes of
 * the `sources`, `destinations` and `computations` tables' own SQL, in an order that keeps every
 * reference valid, run by each backend inside one transaction (`sqlite/sql/config.ts`,
 * `postgres/sql/config.ts`), where the tables' own transactions join the outer one.
 */
import type {
  ComputationChange,
  ComputationRow,
  ComputationStamp,
  ComputationsSql,
  QueueScope,
} from './computations.ts'
import type { DestinationChange, DestinationRow, DestinationsSql } from './destinations.ts'
import type { SourceChange, SourceRow, SourcesSql } from './sources.ts'
import type { Awaitable } from './sql-types.ts'

/** The rows of one apply, ids resolved. */
export interface ConfigRowWrites {
  /**
   * The names of the objects it creates: none may exist when the transaction runs (another apply made
   * it since this one was planned), or nothing is applied.
   */
  newNames: { sources: string[]; destinations: string[]; computedTraits: string[]; audiences: string[] }
  deleteComputations: string[]
  insertSources: (Omit<SourceRow, 'enabled' | 'write_key_hash'> & {
    enabled: boolean
    write_key_hash: string
  })[]
  updateSources: { id: string; change: SourceChange }[]
  insertDestinations: { row: Omit<DestinationRow, 'enabled'> & { enabled: boolean }; sourceIds: string[] }[]
  updateDestinations: { id: string; change: DestinationChange; sourceIds: string[] | undefined }[]
  deleteDestinations: string[]
  deleteSources: string[]
  insertComputations: { row: ComputationRow; queue: QueueScope }[]
  /** After the insertions: a new computation created disabled is updated here. */
  /** `read`: the row the change was made from (ComputationsSql.update). */
  updateComputations: { id: string; change: ComputationChange; queue: QueueScope; read: ComputationStamp }[]
}

export interface ConfigSql {
  /** Every write in one transaction; throws `StaleConfigWrite` (after rolling back) when one finds nothing to change. */
  apply(writes: ConfigRowWrites): Awaitable<void>
}

/** The tables whose SQL an apply runs. */
export interface ConfigTables {
  sources: SourcesSql
  destinations: DestinationsSql
  computations: ComputationsSql
}

/** A write that found its object gone (or a computation's key taken): the transaction is rolled back. */
export class StaleConfigWrite extends Error {}

/** One write: its statement(s), and whether its answer means it took effect. */
export interface ConfigStep {
  run(): Awaitable<unknown>
  /** What the write was, for the error when it did not take effect. */
  what: string
  /** False for a write that answers nothing (it throws if it fails). Default true. */
  answers?: boolean
}

/** Throws `StaleConfigWrite` when a step's answer says it did not take effect. */
export function checkStep(step: ConfigStep, answer: unknown): void {
  if (step.answers !== false && !answer) {
    throw new StaleConfigWrite(`Could not ${step.what}: it changed while the configuration was applied.`)
  }
}

/** The writes in the order they must run; each answers something truthy when it took effect (see `checkStep`). */
export function configSteps(tables: ConfigTables, writes: ConfigRowWrites): ConfigStep[] {
  const { sources, destinations, computations } = tables
  return [
    { run: () => namesFree(tables, writes.newNames), what: 'create objects whose names another apply took' },
    ...writes.deleteComputations.map((id) => ({
      run: () => computations.delete(id),
      what: `delete computation ${id}`,
    })),
    ...writes.insertSources.map((row) => ({
      run: () => sources.insert(row),
      what: `create source ${row.name}`,
    })),
    ...writes.updateSources.map(({ id, change }) => ({
      run: () => sources.update(id, change),
      what: `update source ${id}`,
    })),
    ...writes.insertDestinations.map(({ row, sourceIds }) => ({
      run: () => destinations.insert(row, sourceIds),
      what: `create destination ${row.name}`,
      answers: false,
    })),
    ...writes.updateDestinations.map(({ id, change, sourceIds }) => ({
      run: () => destinations.update(id, change, sourceIds),
      what: `update destination ${id}`,
    })),
    ...writes.deleteDestinations.map((id) => ({
      run: () => destinations.delete(id),
      what: `delete destination ${id}`,
    })),
    ...writes.deleteSources.map((id) => ({ run: () => sources.delete(id), what: `delete source ${id}` })),
    ...writes.insertComputations.map(({ row, queue }) => ({
      run: () => computations.insert(row, queue),
      what: `create ${row.class === 'audience' ? 'audience' : 'computed trait'} with key "${row.key}"`,
    })),
    ...writes.updateComputations.map(({ id, change, queue, read }) => ({
      run: () => computations.update(id, change, queue, read),
      what: `update computation ${id}`,
    })),
  ]
}

/** True when no object has one of `names` in its section (read in the transaction, after its lock). */
function namesFree(tables: ConfigTables, names: ConfigRowWrites['newNames']): Awaitable<boolean> {
  const lists = [tables.sources.list(), tables.destinations.list(), tables.computations.list()] as const
  const free = ([sources, destinations, computations]: [
    { name: string }[],
    { name: string }[],
    ComputationRow[],
  ]) =>
    !sources.some((row) => names.sources.includes(row.name)) &&
    !destinations.some((row) => names.destinations.includes(row.name)) &&
    !computations.some((row) =>
      (row.class === 'audience' ? names.audiences : names.computedTraits).includes(row.name),
    )
  // SQLite answers at once (its steps must run synchronously inside its transaction); PostgreSQL later.
  return lists.some((list) => list instanceof Promise)
    ? Promise.all(lists).then(free)
    : free(lists as unknown as Parameters<typeof free>[0])
}
