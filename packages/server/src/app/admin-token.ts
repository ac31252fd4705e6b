import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type Config, ConfigError } from '../config.ts'
import { newSecretToken } from '../lib/ids.ts'
import { privateDirectory, privateFiles } from '../lib/private-files.ts'

/** The shortest admin token accepted: 24 characters of `openssl rand -base64 32` carry 144 random bits. */
export const MIN_ADMIN_TOKEN_LENGTH = 24

/**
 * Refuses a configured admin token too short to withstand guessing (the management API throttles
 * failed attempts per address, but an attacker may have many addresses).
 */
export function checkAdminToken(token: string | undefined): void {
  if (token === undefined || token.length >= MIN_ADMIN_TOKEN_LENGTH) return
  throw new ConfigError(
    'SLUICE_ADMIN_TOKEN',
    `is ${token.length} characters long; use at least ${MIN_ADMIN_TOKEN_LENGTH} random ones, e.g. SLUICE_ADMIN_TOKEN=$(openssl rand -base64 32), or unset it to have Sluice generate one`,
  )
}

/**
 * The management API's bearer token: `SLUICE_ADMIN_TOKEN` when set; otherwise the token kept in
 * `<dataDir>/admin-token`, generated (mode 0600) at first start so the CLI can print it once.
 */
export async function resolveAdminToken(config: Config): Promise<{ value: string; generated: boolean }> {
  if (config.adminToken) return { value: config.adminToken, generated: false }
  const file = join(config.dataDir, 'admin-token')
  privateDirectory(config.dataDir)
  privateFiles(file)
  const existing = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null
    throw error
  })
  if (existing?.trim()) return { value: existing.trim(), generated: false }
  const value = newSecretToken()
  // 'wx' fails if another process created it meanwhile; then that token wins.
  try {
    await writeFile(file, `${value}\n`, { mode: 0o600, flag: 'wx' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return resolveAdminToken(config)
    throw error
  }
  return { value, generated: true }
}
