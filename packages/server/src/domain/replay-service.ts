/**
 * Starting, reading and cancelling replays, for every caller (HTTP API, CLI through it, web app). The
 * replay runner (deliver/replay-runner.ts) does the sending; this holds the rules of what may start.
 */
import type { DeliveryStore } from './delivery-store.ts'
import { NotFoundError, ValidationError } from './errors.ts'
import { requireDestination } from './lookups.ts'
import type { ReplayStore } from './replay-store.ts'
import type { Replay, ReplayRequest } from './replays.ts'
import type { SourceStore } from './source-store.ts'

export interface ReplayServiceOptions {
  /** `SLUICE_RETENTION_DAYS` in ms: calls received earlier are gone, so a window may not start before. */
  retentionMs: number
  /**
   * How long a cancel waits for the replay's requests in flight to end (it answers once nothing more
   * can be sent). Default 35 s: longer than a delivery lease (30 s by default).
   */
  cancelWaitMs?: number
  /** Called after a replay was created (this process's runner starts at once instead of at its next poll). */
  afterCreate?: () => void
}

const DAY_MS = 86_400_000

export function replayNotFound(id: string): NotFoundError {
  return new NotFoundError(
    'replay_not_found',
    `No replay ${id} for this destination; GET /api/v1/destinations/{id}/replays lists them.`,
  )
}

export class ReplayService {
  private readonly store: ReplayStore & DeliveryStore & SourceStore
  private readonly retentionMs: number
  private readonly cancelWaitMs: number
  private readonly afterCreate: () => void

  constructor(store: ReplayStore & DeliveryStore & SourceStore, options: ReplayServiceOptions) {
    this.store = store
    this.retentionMs = options.retentionMs
    this.cancelWaitMs = options.cancelWaitMs ?? 35_000
    this.afterCreate = options.afterCreate ?? (() => {})
  }

  async start(request: ReplayRequest, now = Date.now()): Promise<Replay> {
    const destination = await requireDestination(this.store, request.destinationId)
    if (request.from >= request.to) {
      throw new ValidationError(
        '/to',
        `"from" (${iso(request.from)}) must be before "to" (${iso(request.to)}): a replay sends the calls received from "from" up to, not including, "to".`,
      )
    }
    const keptSince = now - this.retentionMs
    if (request.from < keptSince) {
      const days = Math.round(this.retentionMs / DAY_MS)
      throw new ValidationError(
        '/from',
        `The calls received before ${iso(keptSince)} are gone: Sluice keeps calls for ${days} day${days === 1 ? '' : 's'} (SLUICE_RETENTION_DAYS). Start the window at or after that time.`,
      )
    }
    const sourceIds = request.sourceIds ?? destination.sourceIds
    if (sourceIds.length === 0) {
      throw new ValidationError(
        '/sourceIds',
        `Destination ${destination.id} has no connected source, so there is nothing to replay; connect a source first (PATCH /api/v1/destinations/${destination.id} with "sourceIds").`,
      )
    }
    for (const [index, sourceId] of sourceIds.entries()) {
      if ((await this.store.getSource(sourceId)) === null) {
        throw new ValidationError(
          `/sourceIds/${index}`,
          `No source ${sourceId}; GET /api/v1/sources lists them.`,
        )
      }
      if (!destination.sourceIds.includes(sourceId)) {
        throw new ValidationError(
          `/sourceIds/${index}`,
          `Source ${sourceId} is not connected to destination ${destination.id}: a replay sends only the calls of connected sources (${destination.sourceIds.join(', ') || 'none'}). Connect it first, or leave it out.`,
        )
      }
    }
    const replay = await this.store.createReplay({
      destinationId: destination.id,
      sourceIds: [...new Set(sourceIds)],
      from: request.from,
      to: request.to,
      types: request.types && request.types.length > 0 ? [...new Set(request.types)] : null,
      events: request.events && request.events.length > 0 ? [...new Set(request.events)] : null,
      force: request.force ?? false,
    })
    this.afterCreate()
    return replay
  }

  async list(destinationId: string): Promise<Replay[]> {
    await requireDestination(this.store, destinationId)
    return this.store.listReplays(destinationId)
  }

  async get(destinationId: string, replayId: string): Promise<Replay> {
    await requireDestination(this.store, destinationId)
    const replay = await this.store.getReplay(replayId)
    if (replay === null || replay.destinationId !== destinationId) throw replayNotFound(replayId)
    return replay
  }

  /**
   * Stops a running replay: its waiting deliveries are deleted, and the answer comes once its
   * requests in flight have ended, so nothing of it is sent after. A replay that already ended is
   * answered as it is.
   */
  async cancel(destinationId: string, replayId: string): Promise<Replay> {
    await requireDestination(this.store, destinationId)
    let left = await this.store.cancelReplay(destinationId, replayId, Date.now())
    if (left === null) throw replayNotFound(replayId)
    const deadline = Date.now() + this.cancelWaitMs
    while (left !== null && left.leased > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      left = await this.store.cancelReplay(destinationId, replayId, Date.now())
    }
    return this.get(destinationId, replayId)
  }
}

const iso = (at: number) => new Date(at).toISOString()
