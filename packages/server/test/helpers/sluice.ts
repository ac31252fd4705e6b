import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSluice, type Sluice } from '../../src/app/server.ts'
import { type Config, loadConfig } from '../../src/config.ts'
import type { RetrySettings } from '../../src/deliver/retry-policy.ts'
import type { Source } from '../../src/domain/sources.ts'
import type { Store } from '../../src/store/store.ts'
import { fetchText } from './http.ts'

/**
 * The secret key of every test Sluice on PostgreSQL (processes sharing a database need the same one),
 * and of every spawned one given `DATABASE_URL`: base64 of 32 bytes.
 */
export const TEST_SECRET_KEY = Buffer.alloc(32, 's').toString('base64')

/** The admin token of every test Sluice unless overridden (at least 24 characters, as Sluice requires). */
export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789'

export interface ApiResponse<T = any> {
  status: number
  headers: Headers
  body: T
}

export interface TestSluice {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string
  adminToken: string
  dataDir: string
  sluice: Sluice
  store: Store
  /** Calls the management API with the admin token. */
  api<T = any>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>>
  createSource(name?: string): Promise<Source>
  /** Closes the server; the data dir stays until `destroy()` so a restart can reuse it. */
  close(): Promise<void>
  /** Closes and removes the data dir. */
  destroy(): Promise<void>
}

/**
 * Starts a real Sluice on a random loopback port with its own SQLite data dir (a fresh temp dir
 * unless `dataDir` is given, so a test can restart on the same files). Private destinations are
 * allowed (test receivers are on loopback); `retry` overrides single retry settings.
 */
export async function startTestSluice(
  overrides: Partial<Omit<Config, 'retry'>> & { retry?: Partial<RetrySettings> } = {},
): Promise<TestSluice> {
  const dataDir = overrides.dataDir ?? (await mkdtemp(join(tmpdir(), 'sluice-test-')))
  const defaults = loadConfig({})
  const config: Config = {
    ...defaults,
    port: 0,
    logLevel: 'silent',
    adminToken: TEST_ADMIN_TOKEN,
    // Test receivers listen on 127.0.0.1.
    allowPrivateDestinations: true,
    // Tests replay windows that end a moment ago; the hold's own tests set it (test/deliver/replay-hold.test.ts).
    replayHoldMs: 200,
    ...(overrides.databaseUrl ? { secretKey: TEST_SECRET_KEY } : {}),
    ...overrides,
    retry: { ...defaults.retry, ...overrides.retry },
    dataDir,
  }
  const sluice = await createSluice(config)
  const url = await sluice.listen()
  const adminToken = sluice.adminToken.value
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetchText(url + path, {
      method,
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const { text } = response
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined }
  }
  return {
    url,
    adminToken,
    dataDir,
    sluice,
    store: sluice.store,
    api,
    async createSource(name = 'Test source') {
      return sluice.store.createSource({ name, enabled: true })
    },
    close: () => sluice.close(),
    async destroy() {
      await sluice.close()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}
