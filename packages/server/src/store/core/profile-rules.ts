/**
 * The profile module's rules that the store runs inside its own steps, so that what they decide is
 * committed in the same transaction as the state they read: a batch of calls folded into profiles
 * together with the profile cursor, an evaluation's values together with its sync deliveries. The
 * profile module implements them (profile/store-rules.ts) over the SQL the store hands it; each
 * backend's composition root (SqliteStore, PostgresStore) passes them in. So the store core knows
 * nothing of how a merge or an evaluation works, and imports nothing from profile/.
 */
import type { AudienceNode } from '../../domain/audiences.ts'
import type { Destination } from '../../domain/destinations.ts'
import type {
  AudienceDefinition,
  ComputationChange,
  ComputationRow,
  ComputationsSql,
  QueueScope,
  TraitDefinition,
} from '../tables/computations.ts'
import type { ProfilesSql } from '../tables/profiles.ts'

/** What the rules read and write through: the profile and computation tables, and the destinations. */
export interface ProfileSql {
  profiles: ProfilesSql
  computations: ComputationsSql
  destinations(): Promise<Destination[]>
}

/** A change to a computation: any of its name, destinations, definition (its class's part), enabled. */
export interface ComputationPatch {
  name?: string
  destinationIds?: string[]
  definition?: TraitDefinition | AudienceDefinition
  enabled?: boolean
}

/** The rules over one store's SQL. One per store: it keeps what it folded between steps. */
export interface ProfileRules {
  /**
   * The profile worker's step (ProfileStore.consumeIntoProfiles): consumes up to `limit` committed
   * messages, their profiles applied in one transaction with the cursor. Returns how many.
   */
  consume(limit: number, now: number): Promise<number>
  /** ProfileStore.evaluateComputations: values and sync deliveries, in one transaction. */
  evaluate(limit: number, now: number): Promise<{ evaluated: number; deliveriesCreated: number }>
  previewAudience(
    definition: AudienceNode,
    options: { includeAnonymous: boolean; sampleSize: number },
    now: number,
  ): Promise<{ size: number; sample: string[] }>
  queueWindowEdges(after: number, upTo: number): Promise<number>
  /** The profiles a new computation's backfill queues. */
  backfill(row: Pick<ComputationRow, 'class' | 'definition'>): QueueScope
  /** The row change a patch makes, and the profiles it queues again. */
  change(
    row: ComputationRow,
    patch: ComputationPatch,
    now: number,
  ): { change: ComputationChange; scope: QueueScope }
  /** Calls were erased: nothing derived from them may be used again. */
  callsErased(): void
}

/** Builds a store's rules over its SQL (profile/store-rules.ts `profileRules`). */
export type ProfileRulesFactory = (sql: ProfileSql) => ProfileRules
