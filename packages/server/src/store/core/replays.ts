/** The replays area of the store core (domain/replay-store.ts). */
import type { NewReplay, ReplayStore } from '../../domain/replay-store.ts'
import type {
  LeasedReplay,
  Replay,
  ReplayCandidate,
  ReplayStep,
  ReplayStepResult,
} from '../../domain/replays.ts'
import { newId } from '../../lib/ids.ts'
import { toLeasedReplay, toReplay, toReplayCandidates } from '../tables/replays.ts'
import type { Changes } from './changes.ts'
import type { StoreSql } from './store-sql.ts'

export class ReplaysCore implements ReplayStore {
  readonly #sql: Pick<StoreSql, 'replays'>
  readonly #changes: Changes

  constructor(sql: Pick<StoreSql, 'replays'>, changes: Changes) {
    this.#sql = sql
    this.#changes = changes
  }

  async createReplay(input: NewReplay): Promise<Replay> {
    const id = newId('rpl')
    await this.#sql.replays.insert({
      id,
      destination_id: input.destinationId,
      source_ids: JSON.stringify(input.sourceIds),
      from_at: input.from,
      to_at: input.to,
      types: input.types === null ? null : JSON.stringify(input.types),
      events: input.events === null ? null : JSON.stringify(input.events),
      forced: input.force,
      status: 'RUNNING',
      scan_done: false,
      cursor_at: input.from,
      cursor_pk: 0,
      scanned: 0,
      matched: 0,
      enqueued: 0,
      skipped: 0,
      delivered: 0,
      failed: 0,
      error: null,
      runner: null,
      lease_until: null,
      created_at: Date.now(),
      finished_at: null,
    })
    // Wakes the replay runners (each listens for deliveries work).
    this.#changes.committed('deliveries')
    return (await this.getReplay(id))!
  }

  async listReplays(destinationId: string): Promise<Replay[]> {
    const rows = await this.#sql.replays.list(destinationId)
    const running = rows.filter((row) => row.status === 'RUNNING').map((row) => row.id)
    const counts = running.length > 0 ? await this.#sql.replays.counts(running) : []
    return rows.map((row) => toReplay(row, counts))
  }

  async getReplay(id: string): Promise<Replay | null> {
    const row = await this.#sql.replays.get(id)
    if (!row) return null
    return toReplay(row, row.status === 'RUNNING' ? await this.#sql.replays.counts([id]) : [])
  }

  async leaseReplays(runner: string, now: number, leaseUntil: number): Promise<LeasedReplay[]> {
    return (await this.#sql.replays.lease(runner, now, leaseUntil)).map(toLeasedReplay)
  }

  async replayCandidates(replay: LeasedReplay, before: number, limit: number): Promise<ReplayCandidate[]> {
    if (replay.sourceIds.length === 0) return []
    return toReplayCandidates(
      await this.#sql.replays.candidates(
        replay.sourceIds,
        Math.min(replay.to, before),
        replay.cursor.receivedAt,
        replay.cursor.pk,
        limit,
      ),
    )
  }

  async commitReplayStep(step: ReplayStep): Promise<ReplayStepResult | null> {
    const result = await this.#sql.replays.step(step, Date.now())
    if (result !== null && result.enqueued > 0) this.#changes.committed('deliveries')
    return result
  }

  async replayOutstanding(replayId: string): Promise<number> {
    return Number(await this.#sql.replays.outstanding(replayId))
  }

  async liveWorkDue(destinationId: string, now: number, batching: boolean): Promise<boolean> {
    return this.#sql.replays.liveDue(destinationId, now, batching)
  }

  async finishReplay(replayId: string, runner: string, now: number): Promise<boolean> {
    return this.#sql.replays.finish(replayId, runner, now)
  }

  async failReplay(replayId: string, error: string, now: number): Promise<void> {
    await this.#sql.replays.fail(replayId, error, now)
  }

  async cancelReplay(
    destinationId: string,
    replayId: string,
    now: number,
  ): Promise<{ leased: number } | null> {
    const result = await this.#sql.replays.cancel(destinationId, replayId, now)
    return result === undefined ? null : { leased: Number(result.leased) }
  }

  async stoppedReplays(replayIds: string[]): Promise<string[]> {
    if (replayIds.length === 0) return []
    return this.#sql.replays.stopped(replayIds)
  }
}
