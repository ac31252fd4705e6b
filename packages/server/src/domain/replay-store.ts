/**
 * What replays ask of storage: the replays with their cursors and leases, the calls of their windows,
 * the steps that create their deliveries, and cancellation. One area of the store contract
 * (store/store.ts, with its conventions); the store implements it in store/core/replays.ts.
 */
import type { LeasedReplay, Replay, ReplayCandidate, ReplayStep, ReplayStepResult } from './replays.ts'

export interface NewReplay {
  destinationId: string
  sourceIds: string[]
  from: number
  to: number
  types: string[] | null
  events: string[] | null
  force: boolean
}

export interface ReplayStore {
  createReplay(input: NewReplay): Promise<Replay>
  /** A destination's replays, newest first. */
  listReplays(destinationId: string): Promise<Replay[]>
  getReplay(id: string): Promise<Replay | null>
  /**
   * Leases to `runner`, until `leaseUntil`, every RUNNING replay it already holds or whose lease ran
   * out (its process died), so one process runs a replay at a time.
   */
  leaseReplays(runner: string, now: number, leaseUntil: number): Promise<LeasedReplay[]>
  /**
   * Up to `limit` calls of the replay's window after its cursor and received before `before` (the
   * window's end, or earlier), in the order the replay reads them.
   */
  replayCandidates(replay: LeasedReplay, before: number, limit: number): Promise<ReplayCandidate[]>
  /**
   * Commits one step in one transaction (cursor, counters and the new deliveries, see ReplaysSql.step);
   * null when the replay is no longer this runner's, no longer RUNNING, or moved on. Announces
   * `deliveries` when it created some.
   */
  commitReplayStep(step: ReplayStep): Promise<ReplayStepResult | null>
  /** How many of the replay's deliveries are pending or retrying. */
  replayOutstanding(replayId: string): Promise<number>
  /**
   * Whether the destination has live work (not a replay's) due now that nobody is sending yet: a
   * delivery, or when it batches (`batching`), a formed batch of live messages.
   */
  liveWorkDue(destinationId: string, now: number, batching: boolean): Promise<boolean>
  /** Marks the replay FINISHED when its window is read and its deliveries are final; true when it did. */
  finishReplay(replayId: string, runner: string, now: number): Promise<boolean>
  failReplay(replayId: string, error: string, now: number): Promise<void>
  /**
   * Marks the destination's replay CANCELLED (when RUNNING) and deletes its deliveries that wait
   * unleased; answers how many are still leased (being sent), or null when there is no such replay.
   * Safe to call again: each call deletes what was released since.
   */
  cancelReplay(destinationId: string, replayId: string, now: number): Promise<{ leased: number } | null>
  /** Which of these replays are no longer RUNNING: their deliveries must not be sent. */
  stoppedReplays(replayIds: string[]): Promise<string[]>
}
