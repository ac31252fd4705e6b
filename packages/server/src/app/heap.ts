import { performance } from 'node:perf_hooks'
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

let tuned = false

/**
 * Keeps a long-running Sluice's heap close to what it uses. Two V8 flags, both read on every resize
 * rather than at start-up, so they can be set here instead of on the command line; they apply to the
 * whole process, including worker threads started after them.
 *
 * - The young generation stays at its initial size (about 2 MB) instead of growing to 64 MB. A server
 *   allocates at a steady high rate — a few KB per request and per delivery — and V8 answers a high
 *   survival rate by doubling the semi-spaces, which is where most of an idle-looking Sluice's RSS
 *   went (heap 100 MB committed, 26 MB used, draining a backlog). Nearly everything Sluice allocates
 *   dies within one request, so small semi-spaces cost a few percent more scavenges.
 * - After a full collection the old generation may grow by half before the next one, instead of V8's
 *   own factor (up to 4× for a small heap). What small semi-spaces promote is mostly short-lived, so
 *   over a long backlog drain the old generation filled with garbage: 60–67 MB counted as used at the
 *   peak against ~32 MB with this limit, and the peak RSS of a 1,000,000-delivery drain went from
 *   195–206 to 174–175 MB, with no measurable change in ingest or drain throughput.
 */
export function keepHeapSmall(): void {
  if (tuned) return
  tuned = true
  setFlagsFromString('--semi-space-growth-factor=1')
  setFlagsFromString('--heap-growing-percent=50')
}

/**
 * The main thread's young generation: 8 MB (V8's committed size of the new space), what compiling the
 * server's modules grew it to before these limits applied. Ingest keeps request data from being
 * promoted at this size; at the initial 1 MB it cost ~30% more CPU a request (bench/NOTES.md, Ingest).
 */
const YOUNG_GENERATION_BYTES = 8 * 1024 * 1024
/** Small objects that survive a scavenge, ~0.5 MB at a time: what makes V8 grow the young generation. */
const SURVIVORS_PER_ROUND = 20_000

let settled = false

/**
 * Once the server has started: one collection that gives back what start-up left behind, keeping the
 * main thread's young generation at the size ingest needs, without its pages.
 *
 * Compiling the modules and migrating the database fill the young generation (~8 MB, both halves
 * touched) and leave garbage and compiled code that only start-up used; with the growth factor at 1
 * (keepHeapSmall) V8 keeps all of it resident, and its memory reducer may take many seconds to run, or
 * never. A memory-reducing collection (what V8 does on a low-memory notification) shrinks the young
 * generation to its initial size (2 MB, half of it committed) and the old generation to what is live:
 * ~15 MB less resident at rest. The young generation is then grown back to YOUNG_GENERATION_BYTES in
 * one step: V8 grows it at a scavenge that copies more than it holds, by the growth factor, here 4
 * (2 → 8 MB) for the few milliseconds this takes. Its new pages are committed but untouched until load
 * comes. The main thread pauses once for it (tens of milliseconds). `gc` comes from a throw-away
 * context, with the flag that exposes it set only meanwhile, so no script ever sees it.
 *
 * The growth factor is one flag for the whole process: a scavenge of the store worker in those few
 * milliseconds (it allocates nearly nothing at rest) could grow its young generation too. Capping the
 * worker's instead (resource limits or --max-semi-space-size, even at the size it has anyway) measured
 * 4–5% more CPU a request, so it is not done.
 */
export function settleAfterStartup(): void {
  if (settled) return
  settled = true
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as (options: object) => void
  setFlagsFromString('--no-expose-gc')
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' })
  setFlagsFromString('--semi-space-growth-factor=4')
  try {
    let held: object[] = []
    for (let round = 0; round < 8 && youngGenerationBytes() < YOUNG_GENERATION_BYTES; round++) {
      const survivors: object[] = []
      for (let i = 0; i < SURVIVORS_PER_ROUND; i++) survivors.push({ i })
      held = survivors
      gc({ type: 'minor', execution: 'sync' })
    }
    held.length = 0
  } finally {
    setFlagsFromString('--semi-space-growth-factor=1')
  }
}

function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0
}

/** The event loop's busy share below which the main thread counts as idle for the settle. */
const IDLE_UTILIZATION = 0.05

/**
 * settleAfterStartup at the first idle second after `afterMs`: its collection pauses the main thread
 * (tens of milliseconds, more on a slow host), which a server taking traffic from its first second should
 * not pay in the middle of its requests. It checks once a second, on an unref'd timer, until the event
 * loop was busy less than 5% of a second, and then stops checking.
 */
export function settleWhenIdle(afterMs: number): void {
  let last = performance.eventLoopUtilization()
  const check = () => {
    const now = performance.eventLoopUtilization()
    const busy = performance.eventLoopUtilization(now, last).utilization
    last = now
    if (busy < IDLE_UTILIZATION) settleAfterStartup()
    else setTimeout(check, 1_000).unref()
  }
  setTimeout(
    () => {
      last = performance.eventLoopUtilization()
      setTimeout(check, 1_000).unref()
    },
    Math.max(0, afterMs - 1_000),
  ).unref()
}
