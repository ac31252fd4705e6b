/**
 * Which keys seal destinations' secrets at rest (lib/secret-box.ts): `SLUICE_SECRET_KEY`, or else a
 * key generated at first start and kept beside the admin token in `<dataDir>/secret-key` (mode 0600).
 * A shared PostgreSQL database needs the same key in every process, so there it must be set.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Config, ConfigError, secretKey } from '../config.ts'
import { privateDirectory, privateFiles } from '../lib/private-files.ts'
import type { SecretKeys } from './core/store-core.ts'

export const SECRET_KEY_FILE = 'secret-key'

export function resolveSecretKeys(config: Config): SecretKeys {
  const previous = config.secretKeyPrevious
  if (config.secretKey) return { current: config.secretKey, previous }
  if (config.databaseUrl) {
    throw new ConfigError(
      'SLUICE_SECRET_KEY',
      'must be set when DATABASE_URL names a shared database, so every Sluice process encrypts and reads secrets with the same key; make one with: openssl rand -base64 32',
    )
  }
  return { current: keyFile(config.dataDir), previous }
}

/** The key kept in the data directory, if there is one (never generated here). */
export function existingKeyFile(dataDir: string): string | undefined {
  const file = join(dataDir, SECRET_KEY_FILE)
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  return secretKey({ [file]: text }, file)
}

/** The key kept in the data directory, generated if there is none. */
function keyFile(dataDir: string): string {
  const file = join(dataDir, SECRET_KEY_FILE)
  privateDirectory(dataDir)
  try {
    writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' })
  } catch (error) {
    // 'wx' fails when the file exists (or another process wrote it meanwhile): that key wins.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  privateFiles(file)
  const key = secretKey({ [file]: readFileSync(file, 'utf8') }, file)
  if (key === undefined) throw new ConfigError(file, 'is empty; remove it to have a new key generated')
  return key
}
