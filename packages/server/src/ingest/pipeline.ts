/**
 * The ingest pipeline for the calls of one request, whichever endpoint they came through:
 *
 *   authenticate → validate → enrich → serialize → size check → route → commit
 *
 * Each call is judged alone: an invalid one is rejected with the rule it broke and the others are
 * still accepted (docs/tracking-api.md). The accepted ones are handed to the group commit, and the
 * returned promise resolves only once they are committed — the Tracking API answers 200 after that.
 */
import { UnauthenticatedError } from '../domain/errors.ts'
import type { AcceptedMessage } from '../domain/message-store.ts'
import type { MessageType } from '../domain/messages.ts'
import type { SourceStore } from '../domain/source-store.ts'
import type { Source } from '../domain/sources.ts'
import { type Metrics, NO_METRICS } from '../observe/metrics.ts'
import { NO_TRACING, type TraceSpan, type Tracing } from '../observe/tracing.ts'
import { type PrivacyFilter, subjectId } from '../privacy/privacy-filter.ts'
import { routeTo } from '../route/integrations.ts'
import { enrichMessage, type RequestContext } from './enrich.ts'
import type { GroupCommit } from './group-commit.ts'
import { MAX_MESSAGE_BYTES } from './limits.ts'
import { type IngestQueue, overloadedError } from './overload.ts'
import { messageSizeError, validateMessage } from './validate.ts'

/** A call refused by a per-message rule; `index` is its position in the request. */
export interface Rejection {
  index: number
  error: string
}

export interface AcceptResult {
  /**
   * Calls committed (or dropped as duplicates of a recent messageId, or as calls of a suppressed user,
   * which count as accepted).
   */
  accepted: number
  rejected: Rejection[]
  /** Positions of the calls dropped because their user is suppressed: never shown to anyone. */
  suppressed: number[]
}

export interface IngestPipelineOptions {
  /** Where calls wait for their commit, and the overload limit on it (overload.ts). */
  queue: IngestQueue
  /** Counters per source. Default: none. */
  metrics?: Metrics
  /** Spans for each request and its commit. Default: none. */
  tracing?: Tracing
  /** Drops calls of suppressed users (acknowledged, never stored). Default: none are dropped. */
  privacy?: PrivacyFilter
}

export class IngestPipeline {
  private readonly store: SourceStore
  private readonly groupCommit: GroupCommit
  private readonly queue: IngestQueue
  private readonly metrics: Metrics
  private readonly tracing: Tracing
  private readonly privacy: PrivacyFilter | undefined

  constructor(store: SourceStore, groupCommit: GroupCommit, options: IngestPipelineOptions) {
    this.store = store
    this.groupCommit = groupCommit
    this.queue = options.queue
    this.metrics = options.metrics ?? NO_METRICS
    this.tracing = options.tracing ?? NO_TRACING
    this.privacy = options.privacy
  }

  /**
   * The source a write key belongs to, if it may send calls: refuses a missing or unknown key and a
   * disabled source.
   */
  async sourceFor(writeKey: string | undefined): Promise<Source> {
    if (!writeKey) {
      throw new UnauthenticatedError(
        'missing_write_key',
        'No write key: send the source write key as the HTTP Basic user name with an empty password, or as "writeKey" in the body.',
      )
    }
    const source = await this.store.getSourceByWriteKey(writeKey)
    if (!source) {
      throw new UnauthenticatedError(
        'unknown_write_key',
        'Unknown write key: copy the write key of an existing source (sluice sources list, or the management API).',
      )
    }
    if (!source.enabled) {
      throw new UnauthenticatedError(
        'source_disabled',
        `Source ${source.id} is disabled; enable it to send events.`,
      )
    }
    return source
  }

  /**
   * Runs the calls of one request through the pipeline for `source` (from `sourceFor`). `forcedType` is the type a
   * single-call endpoint imposes (`/v1/track` stores a track whatever the body says).
   */
  async accept(
    source: Source,
    items: unknown[],
    request: RequestContext,
    forcedType?: MessageType,
  ): Promise<AcceptResult> {
    const span = this.tracing.startIngest(source.id, items.length)
    try {
      const result = await this.acceptTraced(source, items, request, forcedType, span)
      span.end({ 'sluice.accepted': result.accepted, 'sluice.rejected': result.rejected.length })
      return result
    } catch (error) {
      span.fail(error)
      throw error
    }
  }

  private async acceptTraced(
    source: Source,
    items: unknown[],
    request: RequestContext,
    forcedType: MessageType | undefined,
    requestSpan: TraceSpan,
  ): Promise<AcceptResult> {
    const counters = this.metrics.source(source.id)
    if (this.queue.full) {
      counters.rejected('overloaded', items.length)
      throw overloadedError()
    }
    const accepted: AcceptedMessage[] = []
    const rejected: Rejection[] = []
    const suppressed: number[] = []
    let tooLarge = 0
    let acceptedBytes = 0
    for (let index = 0; index < items.length; index++) {
      const item = items[index]
      const candidate =
        forcedType && item !== null && typeof item === 'object' && !Array.isArray(item)
          ? { ...item, type: forcedType }
          : item
      const error = validateMessage(candidate)
      if (error) {
        rejected.push({ index, error })
        continue
      }
      const message = candidate as Record<string, unknown>
      const type = message.type as MessageType
      const userId = subjectId(message.userId)
      const previousId = type === 'alias' ? subjectId(message.previousId) : null
      // Before anything is stored or routed: a suppressed user's call is acknowledged and dropped.
      if (this.privacy?.isSuppressed(source.id, userId, previousId)) {
        suppressed.push(index)
        continue
      }
      const payload = enrichMessage(message, type, request)
      const payloadJson = JSON.stringify(payload)
      // Serialize once. The enriched message is never more than ~64 bytes smaller than the one sent
      // (only a long sentAt gets shorter; a writeKey is removed, so that case is measured), so the
      // exact 32 KB check on the original only runs for messages near the limit.
      if (payloadJson.length * 3 > MAX_MESSAGE_BYTES - 1024 || 'writeKey' in message) {
        const sizeError = messageSizeError(Buffer.byteLength(JSON.stringify(candidate)))
        if (sizeError) {
          rejected.push({ index, error: sizeError })
          tooLarge++
          continue
        }
      }
      acceptedBytes += payloadJson.length
      accepted.push({
        sourceId: source.id,
        messageId: payload.messageId as string,
        type,
        receivedAt: request.receivedAt,
        routeTo: routeTo(payload.integrations),
        payloadJson,
        userId,
        previousId,
      })
    }
    if (accepted.length > 0) {
      const span = this.tracing.startCommit(requestSpan, accepted)
      this.queue.enter(acceptedBytes, accepted.length)
      try {
        // We MUST await the commit: a 200 promises the messages are durable.
        const { stored } = await this.groupCommit.submit(accepted)
        const storedCount = countTrue(stored)
        counters.accepted(storedCount)
        if (storedCount < stored.length) counters.deduplicated(stored.length - storedCount)
        span.end()
      } catch (error) {
        span.fail(error)
        throw error
      } finally {
        this.queue.leave(acceptedBytes, accepted.length)
      }
    }
    if (rejected.length > 0) {
      if (tooLarge > 0) counters.rejected('message_too_large', tooLarge)
      if (rejected.length > tooLarge) counters.rejected('invalid_message', rejected.length - tooLarge)
      await this.store.countRejected(source.id, rejected.length)
    }
    if (suppressed.length > 0) {
      counters.suppressed(suppressed.length)
      await this.store.countSuppressed(source.id, suppressed.length)
    }
    return { accepted: accepted.length + suppressed.length, rejected, suppressed }
  }
}

function countTrue(flags: boolean[]): number {
  let count = 0
  for (const flag of flags) if (flag) count++
  return count
}
