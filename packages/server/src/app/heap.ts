import { setFlagsFromString } from 'node:v8'

let tuned = false

/**
 * Keeps V8's young generation at its initial size (about 2 MB) instead of letting it grow to 64 MB.
 * A server allocates at a steady high rate — a few KB per request and per delivery — and V8 answers a
 * high survival rate by doubling the semi-spaces, which is where most of an idle-looking Sluice's RSS
 * went (heap 100 MB committed, 26 MB used, draining a backlog). Nearly everything Sluice allocates
 * dies within one request, so small semi-spaces cost a few percent more scavenges and no extra
 * promotion. The growth factor is the one heap flag V8 reads on every resize rather than at start-up,
 * so it can be set here instead of on the command line; it applies to the whole process, including
 * worker threads started after it.
 */
export function keepYoungGenerationSmall(): void {
  if (tuned) return
  tuned = true
  setFlagsFromString('--semi-space-growth-factor=1')
}
