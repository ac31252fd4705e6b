import { setFlagsFromString } from 'node:v8'

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
