import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Config } from '../config.ts'
import { newSecretToken } from '../lib/ids.ts'

/**
 * The management API's bearer token: `SLUICE_ADMIN_TOKEN` when set; otherwise the token kept in
 * `<dataDir>/admin-token`, generated (mode 0600) at first start so the CLI can print it once.
 */
export async function resolveAdminToken(config: Config): Promise<{ value: string; generated: boolean }> {
  if (config.adminToken) return { value: config.adminToken, generated: false }
  const file = join(config.dataDir, 'admin-token')
  const existing = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null
    throw error
  })
  if (existing?.trim()) return { value: existing.trim(), generated: false }
  const value = newSecretToken()
  await mkdir(config.dataDir, { recursive: true })
  // 'wx' fails if another process created it meanwhile; then that token wins.
  try {
    await writeFile(file, `${value}\n`, { mode: 0o600, flag: 'wx' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return resolveAdminToken(config)
    throw error
  }
  return { value, generated: true }
}
