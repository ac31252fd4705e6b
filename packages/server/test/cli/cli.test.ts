import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import { runCli, spawnSluice } from '../helpers/process.ts'
import { startTestSluice } from '../helpers/sluice.ts'

let dataDir: string
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'sluice-cli-'))
})
after(() => rm(dataDir, { recursive: true, force: true }))

describe('sluice start', () => {
  test('first start prints the address, the admin token once, and a curl line that works', async () => {
    const sluice = await spawnSluice({ SLUICE_DATA_DIR: dataDir })
    const banner = sluice.output()
    const token = /Admin token \(shown once[^)]*\): (\S+)/.exec(banner)?.[1]
    assert.ok(token, banner)
    assert.equal((await readFile(join(dataDir, 'admin-token'), 'utf8')).trim(), token)
    assert.equal((await stat(join(dataDir, 'admin-token'))).mode & 0o777, 0o600)

    // Run the printed curl command exactly as a user would paste it.
    const curl = /(curl [\s\S]+?\/v1\/track)/.exec(banner)?.[1]
    assert.ok(curl, banner)
    const { stdout } = await promisify(execFile)('sh', ['-c', curl.replace(/\\\n/g, ' ')])
    assert.deepEqual(JSON.parse(stdout), { success: true })

    const sources = await fetch(`${sluice.url}/api/v1/sources`, {
      headers: { authorization: `Bearer ${token}` },
    })
    assert.equal(sources.status, 200)

    sluice.child.kill('SIGTERM')
    assert.equal(await sluice.exited, 0)

    const store = new SqliteStore({ dataDir, synchronous: 'FULL' })
    const [first] = await store.listSources()
    assert.equal(await store.countMessages(first!.id), 1)
    await store.close()
  })

  test('a later start does not print the token again and reuses it', async () => {
    const sluice = await spawnSluice({ SLUICE_DATA_DIR: dataDir })
    assert.doesNotMatch(sluice.output(), /shown once/)
    assert.match(sluice.output(), /Admin token: in .*admin-token/)
    sluice.child.kill('SIGINT')
    assert.equal(await sluice.exited, 0)
  })

  test('SLUICE_ADMIN_TOKEN wins over the stored token', async () => {
    const sluice = await spawnSluice({
      SLUICE_DATA_DIR: dataDir,
      SLUICE_ADMIN_TOKEN: 'from-env-token-0123456789',
    })
    const ok = await fetch(`${sluice.url}/api/v1/sources`, {
      headers: { authorization: 'Bearer from-env-token-0123456789' },
    })
    assert.equal(ok.status, 200)
    sluice.child.kill('SIGTERM')
    await sluice.exited
  })

  test('SIGTERM lets an in-flight request finish and commit before exiting', async () => {
    const sluice = await spawnSluice({ SLUICE_DATA_DIR: dataDir })
    const store = new SqliteStore({ dataDir, synchronous: 'FULL' })
    const [source] = await store.listSources()
    await store.close()
    const body = JSON.stringify({
      batch: [{ type: 'track', userId: 'u', event: 'E', messageId: 'in-flight' }],
    })
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        `${sluice.url}/v1/batch`,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            authorization: `Basic ${Buffer.from(`${source!.writeKey}:`).toString('base64')}`,
          },
        },
        (res) => {
          let text = ''
          res.on('data', (c: Buffer) => {
            text += c.toString()
          })
          res.on('end', () => resolve({ status: res.statusCode!, text }))
        },
      )
      req.on('error', reject)
      // Send half the body, signal the server, then send the rest.
      req.write(body.slice(0, 20))
      setTimeout(() => {
        sluice.child.kill('SIGTERM')
        setTimeout(() => req.end(body.slice(20)), 200)
      }, 200)
    })
    const answer = await response
    assert.equal(answer.status, 200, answer.text)
    assert.equal(await sluice.exited, 0)
    const reopened = new SqliteStore({ dataDir, synchronous: 'FULL' })
    assert.ok(await reopened.getMessage(source!.id, 'in-flight'))
    await reopened.close()
  })

  test('a bad setting stops start-up with a message naming it', async () => {
    const result = await runCli(['start'], { SLUICE_DATA_DIR: dataDir, PORT: 'eighty' })
    assert.equal(result.code, 1)
    assert.match(result.stderr, /PORT: expected a whole number from 0 to 65535, got "eighty"/)
  })

  test('retry settings that contradict each other stop start-up with a message naming both', async () => {
    const result = await runCli(['start'], {
      SLUICE_DATA_DIR: dataDir,
      SLUICE_RETRY_BASE_DELAY_MS: '60000',
      SLUICE_RETRY_MAX_DELAY_MS: '1000',
    })
    assert.equal(result.code, 1)
    assert.match(
      result.stderr,
      /SLUICE_RETRY_MAX_DELAY_MS: must be at least SLUICE_RETRY_BASE_DELAY_MS \(60000\).*got 1000/,
    )
  })
})

describe('sluice sources', () => {
  test('create prints the write key; list shows it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sluice-cli-sources-'))
    try {
      const created = await runCli(['sources', 'create', 'Billing', 'service'], { SLUICE_DATA_DIR: dir })
      assert.equal(created.code, 0, created.stderr)
      const writeKey = /Write key: (\S+)/.exec(created.stdout)?.[1]
      assert.ok(writeKey)
      const listed = await runCli(['sources', 'list', '--json'], { SLUICE_DATA_DIR: dir })
      const sources = JSON.parse(listed.stdout) as { name: string; writeKey: string }[]
      assert.deepEqual(
        sources.map((s) => [s.name, s.writeKey]),
        [['Billing service', writeKey]],
      )
      const human = await runCli(['sources', 'list'], { SLUICE_DATA_DIR: dir })
      assert.match(human.stdout, /enabled .* Billing service/)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  test('create applies the same name rule as the management API: trimmed, at most 200 characters', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sluice-cli-names-'))
    const sluice = await startTestSluice()
    try {
      const tooLong = 'x'.repeat(201)
      const refused = await runCli(['sources', 'create', tooLong], { SLUICE_DATA_DIR: dir })
      assert.equal(refused.code, 1)
      assert.equal(refused.stderr.trim(), 'name is too long; at most 200 characters are allowed.')
      const api = await sluice.api('POST', '/api/v1/sources', { name: tooLong })
      assert.equal(api.status, 400)
      assert.equal(refused.stderr.trim(), api.body.error.message, 'the same message as the API')

      const created = await runCli(['sources', 'create', '  Padded  ', '--json'], { SLUICE_DATA_DIR: dir })
      assert.equal(created.code, 0, created.stderr)
      assert.equal(JSON.parse(created.stdout).name, 'Padded')
      const listed = await runCli(['sources', 'list', '--json'], { SLUICE_DATA_DIR: dir })
      assert.deepEqual(
        (JSON.parse(listed.stdout) as { name: string }[]).map((source) => source.name),
        ['Padded'],
        'nothing was stored for the refused name',
      )

      const blank = await runCli(['sources', 'create', '   '], { SLUICE_DATA_DIR: dir })
      assert.equal(blank.code, 1)
      assert.equal(blank.stderr.trim(), 'Give the source a name: sluice sources create "My app"')
    } finally {
      await sluice.destroy()
      await rm(dir, { recursive: true, force: true })
    }
  })

  test('create without a name explains how to call it', async () => {
    const result = await runCli(['sources', 'create'], { SLUICE_DATA_DIR: dataDir })
    assert.equal(result.code, 1)
    assert.match(result.stderr, /sluice sources create "My app"/)
  })

  test('an unknown command prints usage', async () => {
    const result = await runCli(['frobnicate'], { SLUICE_DATA_DIR: dataDir })
    assert.equal(result.code, 1)
    assert.match(result.stderr, /Unknown command "frobnicate"[\s\S]*Usage: sluice/)
  })
})
