/**
 * The data directory holds the database, the admin token and the secret key: only Sluice's own user
 * may read them. The directory is made 0700 and those files 0600, also when they already exist with
 * wider modes (made by an older version, or by hand).
 */
import { chmodSync, mkdirSync } from 'node:fs'

/**
 * Creates `dir` if missing; either way, mode 0700. A directory of another user's (a mounted volume)
 * whose mode this process may not change is left as it is: its files are still made 0600.
 */
export function privateDirectory(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  try {
    chmodSync(dir, 0o700)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error
  }
}

/** Mode 0600 for each of `files` that exists. */
export function privateFiles(...files: string[]): void {
  for (const file of files) {
    try {
      chmodSync(file, 0o600)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  }
}
