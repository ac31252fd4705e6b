/** Lets the process exit while `timer` is pending (Node, Bun: `unref()`; Deno: `Deno.unrefTimer`). */
export function unref(timer: unknown): void {
  const handle = timer as { unref?: () => void } | null
  if (typeof handle === 'object' && handle !== null && typeof handle.unref === 'function') {
    handle.unref()
    return
  }
  const deno = (globalThis as { Deno?: { unrefTimer?: (id: unknown) => void } }).Deno
  deno?.unrefTimer?.(timer)
}

/** Resolves after `ms`, or as soon as `signal` aborts (never rejects: the caller checks `signal`). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted || ms <= 0) return Promise.resolve()
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done)
  })
}
