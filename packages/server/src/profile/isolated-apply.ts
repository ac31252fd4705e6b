/**
 * How an evaluation step's writes are committed so that one computation whose result the store refuses
 * fails alone (status `failed`, with the store's error) instead of failing the step, and so the profile
 * worker, for every profile and computation, again and again.
 */
import { isStoreUnavailable } from '../store/errors.ts'
import type { ComputationsSql, EvaluationWrites } from '../store/tables/computations.ts'

/**
 * Applies the step's writes; answers what was committed, or null when the step was stale. When the
 * store refuses them (one computation's result cannot be stored), the computation at fault fails alone:
 * the writes are applied again without one computation's at a time, that one marked failed with the
 * store's error, until an attempt commits. Should no single computation be at fault, every computation
 * with writes in this step is marked failed (each can be retried by enabling it), so no step is ever
 * retried forever.
 */
export async function applyIsolating(
  sql: ComputationsSql,
  writes: EvaluationWrites,
): Promise<EvaluationWrites | null> {
  let refusal: unknown
  try {
    return (await sql.apply(writes)) ? writes : null
  } catch (error) {
    refusal = error
  }
  const suspects = [...computationsWritten(writes)]
  // A store that is down, or a conflict between transactions, is no computation's fault: the step is
  // simply tried again later.
  if (suspects.length === 0 || isStoreUnavailable(refusal) || isConflict(refusal)) throw refusal
  const error = `its result could not be stored: ${refusal instanceof Error ? refusal.message : String(refusal)}`
  for (const suspect of [...suspects.map((id) => [id]), suspects]) {
    const without = withoutComputations(writes, new Set(suspect), error)
    try {
      return (await sql.apply(without)) ? without : null
    } catch {
      // Not (only) this one: try the next.
    }
  }
  throw refusal
}

/** SQLSTATEs of a transaction given up for its timing, not its content: deadlock, serialization, timeout, lock. */
const CONFLICTS = new Set(['40001', '40P01', '57014', '55P03'])

function isConflict(error: unknown): boolean {
  return CONFLICTS.has((error as { code?: string } | null)?.code ?? '')
}

function computationsWritten(writes: EvaluationWrites): Set<string> {
  const { setValues, clearValues, sent, messages, gated } = writes
  return new Set(
    [...setValues, ...clearValues, ...sent, ...messages, ...gated].map((row) => row.computation_id),
  )
}

/** The writes without those of the computations `ids`, which are marked failed with `error`. */
export function withoutComputations(
  writes: EvaluationWrites,
  ids: Set<string>,
  error: string,
): EvaluationWrites {
  const kept = <T extends { computation_id: string }>(rows: T[]) =>
    rows.filter((row) => !ids.has(row.computation_id))
  return {
    ...writes,
    setValues: kept(writes.setValues),
    clearValues: kept(writes.clearValues),
    sent: kept(writes.sent),
    messages: kept(writes.messages),
    gated: kept(writes.gated),
    failed: [...writes.failed, ...[...ids].map((computation_id) => ({ computation_id, error }))],
  }
}
