/**
 * Runs SQLite WAL checkpoints on a worker thread with its own connection. A checkpoint copies WAL
 * pages into the database file and fsyncs it; done on the main thread (SQLite's auto-checkpoint) it
 * would stall every request for that long. PASSIVE never blocks the main connection's writers.
 */
import { DatabaseSync } from 'node:sqlite'
import { parentPort, workerData } from 'node:worker_threads'

const { path, synchronous, intervalMs } = workerData as {
  path: string
  synchronous: string
  intervalMs: number
}
const db = new DatabaseSync(path)
db.exec('PRAGMA busy_timeout = 1000')
db.exec(`PRAGMA synchronous = ${synchronous}`)

const timer = setInterval(() => {
  try {
    db.exec('PRAGMA wal_checkpoint(PASSIVE)')
  } catch {
    // Busy or closing: the next tick tries again; the WAL only grows meanwhile.
  }
}, intervalMs)

parentPort?.on('message', (message) => {
  if (message !== 'stop') return
  clearInterval(timer)
  db.close()
  parentPort?.close()
})
