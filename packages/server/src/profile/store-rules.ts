/**
 * The profile module's rules as the store runs them (store/core/profile-rules.ts): one set per store,
 * over its SQL, keeping that store's folds (fold.ts) between evaluations. Each backend's composition
 * root passes `profileRules` to the store core.
 */
import type { ProfileRules, ProfileSql } from '../store/core/profile-rules.ts'
import { previewAudience } from './audience-preview.ts'
import { patchComputation, queueScopeOf } from './computations.ts'
import { consumeMessages } from './consume.ts'
import { evaluateQueued } from './evaluation.ts'
import { FoldCache } from './fold.ts'
import { queueWindowEdges } from './window-edges.ts'

export function profileRules(sql: ProfileSql): ProfileRules {
  /**
   * Evaluation's folds. They follow the calls: a merge or an erasure MUST drop the folds of the
   * profiles it touches (another process's merges are caught by the merge count).
   */
  const folds = new FoldCache()
  const evaluation = { ...sql, folds }
  return {
    consume: (limit, now) =>
      consumeMessages(sql.profiles, sql.computations, limit, now, (merged) => folds.delete(merged)),
    evaluate: (limit, now) => evaluateQueued(evaluation, limit, now),
    previewAudience: (definition, options, now) =>
      previewAudience(sql, definition, options.includeAnonymous, options.sampleSize, now),
    queueWindowEdges: (after, upTo) => queueWindowEdges(sql.computations, after, upTo),
    backfill: queueScopeOf,
    change: patchComputation,
    // Erasure deletes calls: no fold may still count them. Rare enough to start every fold over.
    callsErased: () => folds.clear(),
  }
}
