/**
 * `npm start` runs the built JavaScript (dist/), not the TypeScript the other tests run: the build
 * must hold everything a start needs — the store's worker thread as JavaScript, the SQL migrations,
 * the web app beside it — or a user's first start fails where every other test passes.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { spawnSluice } from '../helpers/process.ts'
import { writeKeyAuth } from '../manage/helpers.ts'

const repository = join(import.meta.dirname, '../../../..')
let dataDir: string
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'sluice-built-'))
})
after(() => rm(dataDir, { recursive: true, force: true }))

test("npm start's entry is the build, and it starts, stores a call and serves the web app", async () => {
  const { scripts } = JSON.parse(await readFile(join(repository, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>
  }
  const entry = /^exec node (\S+\.js) start$/.exec(scripts.start ?? '')?.[1]
  assert.ok(entry, `npm start runs built JavaScript, not ${scripts.start}`)
  const sluice = await spawnSluice(
    { SLUICE_DATA_DIR: dataDir, SLUICE_ADMIN_TOKEN: 'built-admin-token-0123456789' },
    { entry: join(repository, entry) },
  )
  try {
    assert.deepEqual(await (await fetch(`${sluice.url}/readyz`)).json(), {
      ok: true,
      store: 'sqlite',
      role: 'all',
    })
    const admin = { authorization: 'Bearer built-admin-token-0123456789', 'content-type': 'application/json' }
    const source = (await (
      await fetch(`${sluice.url}/api/v1/sources`, {
        method: 'POST',
        headers: admin,
        body: '{"name":"Built"}',
      })
    ).json()) as { id: string; writeKey: string }
    const tracked = await fetch(`${sluice.url}/v1/track`, {
      method: 'POST',
      headers: { authorization: writeKeyAuth(source.writeKey), 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 'u-1', event: 'Built Start', messageId: 'built-1' }),
    })
    assert.equal(tracked.status, 200)
    const stats = (await (
      await fetch(`${sluice.url}/api/v1/sources/${source.id}`, { headers: admin })
    ).json()) as {
      stats: { accepted: number }
    }
    assert.equal(stats.stats.accepted, 1)
    // A browser opening a page of the app gets its shell (packages/web's build, found from dist/).
    const page = await fetch(`${sluice.url}/sources`, { headers: { accept: 'text/html' } })
    assert.equal(page.status, 200)
    assert.match(page.headers.get('content-type') ?? '', /text\/html/)
    assert.match(await page.text(), /<script type="module"[^>]+src="\/assets\//)
  } finally {
    sluice.child.kill('SIGTERM')
    assert.equal(await sluice.exited, 0)
  }
})

test('npm start stopped with SIGTERM (as a container runtime or a process manager stops it) stops Sluice', async () => {
  // npm passes the signal to the script's shell; the script's `exec` makes that shell Sluice itself.
  const child = spawn('npm', ['start', '--ignore-scripts', '--silent'], {
    cwd: repository,
    env: {
      ...process.env,
      PORT: '0',
      LOG_LEVEL: 'warn',
      SLUICE_DATA_DIR: dataDir,
      SLUICE_ADMIN_TOKEN: 'built-admin-token-0123456789',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = once(child, 'exit')
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not start Sluice:\n${output}`)), 30_000)
    const read = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/[^\s]+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve(match[1]!)
      }
    }
    child.stdout!.on('data', read)
    child.stderr!.on('data', read)
  })
  assert.equal((await fetch(`${url}/readyz`)).status, 200)
  child.kill('SIGTERM')
  await exited
  // The server is gone with npm: its port no longer answers.
  await assert.rejects(fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) }))
})
