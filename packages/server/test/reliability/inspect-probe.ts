/**
 * Loaded with `--import` (and `--expose-gc`) into a Sluice child process by `spawnInstrumented`: on the
 * IPC message `inspect` it collects garbage and reports the prototypes' own member names and the
 * process's memory, so a test can check from outside that hostile input polluted nothing and leaked
 * nothing. It adds no route and changes nothing in the server.
 */
const collect = (globalThis as { gc?: () => void }).gc

process.on('message', (message) => {
  if (message !== 'inspect') return
  collect?.()
  process.send?.({
    objectPrototype: Object.getOwnPropertyNames(Object.prototype).sort(),
    arrayPrototype: Object.getOwnPropertyNames(Array.prototype).sort(),
    functionPrototype: Object.getOwnPropertyNames(Function.prototype).sort(),
    memory: process.memoryUsage(),
    gcExposed: collect !== undefined,
  })
})
