import { PerformanceObserver } from 'node:perf_hooks'
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
 *   dies within one request, so small semi-spaces cost a few percent more scavenges. The `sluice start`
 *   command lets the main thread's grow to a few MB under load (see settleAfterStartup).
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
 * The main thread's young generation under load: 8 MB (V8's committed size of the new space). Ingest
 * keeps request data from being promoted at this size; at the initial 1–2 MB it cost ~30% more CPU a
 * request (bench/NOTES.md, Ingest).
 */
const YOUNG_GENERATION_UNDER_LOAD = 8 * 1024 * 1024

let settled = false

/**
 * Once the server has started: one collection that gives back what start-up left behind, then a main
 * thread young generation that grows under load up to YOUNG_GENERATION_UNDER_LOAD and no further.
 *
 * Compiling the modules and migrating the database grow the young generation to ~8 MB and leave
 * garbage and compiled code that only start-up used; with the growth factor at 1 (keepHeapSmall) V8
 * would keep that young generation for good, and its memory reducer may take many seconds to run. A
 * memory-reducing collection (what V8 does on a low-memory notification) shrinks the young
 * generation to its initial size and the old generation to what is live: ~15 MB less resident at
 * rest. `gc` comes from a throw-away context, with the flag that exposes it set only meanwhile, so
 * no script ever sees it.
 *
 * The growth factor is one flag for the whole process, so while the main thread's young generation is
 * below the size ingest needs, V8 may double it again at a scavenge; a `gc` observer sets the factor
 * back to 1 once it is there (it may overshoot by one doubling). Worker threads are not affected: the
 * store worker's young generation is capped by its resource limits (store/sqlite/threaded-store.ts).
 * V8 also shrinks the young generation again when the allocation rate stays low, and then the
 * observer lets it grow at the next load.
 */
export function settleAfterStartup(): void {
  if (settled) return
  settled = true
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as (options: object) => void
  setFlagsFromString('--no-expose-gc')
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' })
  let growing = false
  const steer = () => {
    const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')
    const grow = young !== undefined && young.space_size < YOUNG_GENERATION_UNDER_LOAD
    if (grow === growing) return
    growing = grow
    setFlagsFromString(`--semi-space-growth-factor=${grow ? 2 : 1}`)
  }
  new PerformanceObserver(steer).observe({ type: 'gc' })
  steer()
}
