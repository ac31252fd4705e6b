/**
 * `sluice replay DESTINATION_ID --from … --to …`: starts a replay on a running Sluice's management API
 * and prints its progress until it ends (docs/webhooks.md, "Replay and backfill").
 */
import type { Replay as ReplayView } from '../api/index.ts'
import { ConfigCommandError, call } from './config.ts'

export const REPLAY_USAGE = `  replay DESTINATION_ID --from TIME --to TIME [--source ID]... [--type T]... [--event E]... [--force]
                         Send the stored calls received in [from, to) to the destination again
                         (ISO 8601 times or dates), through its subscription, filters, mapping and
                         batching; calls it already got are skipped unless --force. Prints progress
                         until the replay ends. Same --url and --admin-token as config`

export interface ReplayCommandOptions {
  baseUrl: string
  adminToken: string
  from?: string | undefined
  to?: string | undefined
  sourceIds?: string[] | undefined
  types?: string[] | undefined
  events?: string[] | undefined
  force?: boolean | undefined
  /** Print the final replay as JSON instead of progress lines. */
  json?: boolean | undefined
  /** How often progress is read. Default 1 s. */
  pollMs?: number
}

/** Exits 0 once the replay FINISHED, 1 when it was cancelled or failed. */
export async function replayCommand(
  destinationId: string | undefined,
  options: ReplayCommandOptions,
): Promise<number> {
  if (!destinationId || !options.from || !options.to) {
    throw new ConfigCommandError(`Usage:\n${REPLAY_USAGE}`)
  }
  const path = `/destinations/${encodeURIComponent(destinationId)}/replays`
  let replay = (await call(options, 'POST', path, {
    from: options.from,
    to: options.to,
    ...(options.sourceIds ? { sourceIds: options.sourceIds } : {}),
    ...(options.types ? { types: options.types } : {}),
    ...(options.events ? { events: options.events } : {}),
    force: options.force ?? false,
  })) as ReplayView
  if (!options.json) console.log(`Replay ${replay.id} started (cancel: DELETE /api/v1${path}/${replay.id}).`)
  let shown = ''
  for (;;) {
    const line = progress(replay)
    if (!options.json && line !== shown) console.log(line)
    shown = line
    if (replay.status !== 'RUNNING') break
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1_000))
    replay = (await call(options, 'GET', `${path}/${replay.id}`)) as ReplayView
  }
  if (options.json) console.log(JSON.stringify(replay, null, 2))
  else if (replay.error) console.log(`Failed: ${replay.error}`)
  return replay.status === 'FINISHED' ? 0 : 1
}

function progress(replay: ReplayView): string {
  return (
    `${replay.status}: ${replay.scanned} read, ${replay.matched} matched, ${replay.enqueued} enqueued, ` +
    `${replay.skipped} skipped (already delivered), ${replay.delivered} delivered, ${replay.failed} failed`
  )
}
