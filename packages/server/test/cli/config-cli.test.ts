/**
 * `sluice config export|plan|apply` against a running Sluice, on SQLite and PostgreSQL: YAML and JSON
 * files, `{"$env": …}` secrets from the CLI's environment, --prune, and the errors it prints.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { parse as parseYaml } from 'yaml'
import { opensslHmacSha1, type Receiver, startReceiver } from '../deliver/receivers.ts'
import { runCli } from '../helpers/process.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { rawRequest, trackCall, writeKeyAuth } from '../manage/helpers.ts'
import { until } from '../reliability/helpers.ts'
import { freshDatabase } from '../store/pg.ts'

const WRITE_KEY = 'cli-write-key-0123456789abcdef'

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`sluice config against a running Sluice on ${backend}`, () => {
    let dir: string
    let receiver: Receiver
    let sluice: TestSluice
    let dropDatabase = async () => {}
    let cli: (args: string[], env?: Record<string, string>) => ReturnType<typeof runCli>

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'sluice-config-cli-'))
      receiver = await startReceiver()
      if (backend === 'postgres') {
        const database = await freshDatabase()
        dropDatabase = database.drop
        sluice = await startTestSluice({ databaseUrl: database.url })
      } else sluice = await startTestSluice()
      cli = (args, env = {}) =>
        runCli(['config', ...args], { SLUICE_URL: sluice.url, SLUICE_ADMIN_TOKEN: sluice.adminToken, ...env })
    })
    after(async () => {
      await sluice.destroy()
      await dropDatabase()
      await receiver.close()
      await rm(dir, { recursive: true, force: true })
    })

    test('plan then apply a YAML file whose secrets come from the environment', async () => {
      const file = join(dir, 'sluice.yaml')
      await writeFile(
        file,
        `version: 1
sources:
  Web app:
    writeKey: { $env: WEB_WRITE_KEY }
destinations:
  Orders hook:
    sources: [Web app]
    settings:
      webhooks:
        - url: ${receiver.url}/hooks
      sharedSecret: { $env: HOOK_SECRET }
`,
      )
      const env = { WEB_WRITE_KEY: WRITE_KEY, HOOK_SECRET: 'from-the-environment' }

      const missing = await cli(['plan', file], { WEB_WRITE_KEY: WRITE_KEY })
      assert.equal(missing.code, 1)
      assert.match(missing.stderr, /\/destinations\/Orders hook\/settings\/sharedSecret: HOOK_SECRET/)

      const plan = await cli(['plan', file], env)
      assert.equal(plan.code, 0, plan.stderr)
      assert.match(plan.stdout, /\+ create sources "Web app"/)
      assert.match(plan.stdout, /\+ create destinations "Orders hook"/)
      assert.match(plan.stdout, /2 changes to apply/)
      assert.ok(!plan.stdout.includes('from-the-environment'))
      assert.deepEqual((await sluice.api('GET', '/api/v1/sources')).body.sources, [], 'plan changes nothing')

      const apply = await cli(['apply', file], env)
      assert.equal(apply.code, 0, apply.stderr)
      assert.match(apply.stdout, /Applied 2 changes/)
      const same = await cli(['plan', file, '--exit-code'], env)
      assert.equal(same.code, 0, same.stderr)
      assert.match(same.stdout, /No changes/)

      // The write key and the secret are the environment's: a call is accepted and signed with it.
      const sent = await rawRequest(sluice.url, 'POST', '/v1/track', {
        authorization: writeKeyAuth(WRITE_KEY),
        body: trackCall(),
      })
      assert.equal(sent.status, 200)
      await until(
        'the delivery',
        async () => receiver.requests.length,
        (n) => n >= 1,
        15_000,
      )
      const [request] = receiver.requests
      assert.equal(request!.headers['x-signature'], opensslHmacSha1(request!.body, 'from-the-environment'))
    })

    test('export to a file, edit it, plan shows the fields, apply --prune deletes what it leaves out', async () => {
      await sluice.api('POST', '/api/v1/sources', { name: 'Legacy' })
      const exported = await cli(['export'])
      assert.equal(exported.code, 0, exported.stderr)
      const document = JSON.parse(exported.stdout)
      assert.deepEqual(Object.keys(document.sources), ['Legacy', 'Web app'])
      assert.deepEqual(document.sources['Web app'].writeKey, { $secret: 'sources/Web app/writeKey' })
      const withSecrets = await cli(['export', '--secrets'])
      assert.equal(JSON.parse(withSecrets.stdout).sources['Web app'].writeKey, WRITE_KEY)
      const yaml = await cli(['export', '--yaml'])
      assert.deepEqual(parseYaml(yaml.stdout), document)

      delete document.sources.Legacy
      document.destinations['Orders hook'].enabled = false
      const file = join(dir, 'sluice.json')
      await writeFile(file, JSON.stringify(document))
      const plan = await cli(['plan', file])
      assert.equal(plan.code, 0, plan.stderr)
      assert.match(plan.stdout, /~ update destinations "Orders hook"\n {4}\/enabled: true -> false/)
      assert.doesNotMatch(plan.stdout, /delete/)
      assert.equal((await cli(['plan', file, '--exit-code'])).code, 2, 'drift found')
      const pruned = await cli(['plan', file, '--prune'])
      assert.match(pruned.stdout, /- delete sources "Legacy"/)
      const apply = await cli(['apply', file, '--prune', '--json'])
      assert.equal(apply.code, 0, apply.stderr)
      assert.deepEqual(
        JSON.parse(apply.stdout).changes.map((change: { action: string }) => change.action),
        ['delete', 'update'],
      )
      const sources = (await sluice.api('GET', '/api/v1/sources')).body.sources
      assert.deepEqual(
        sources.map((source: { name: string }) => source.name),
        ['Web app'],
      )
    })

    test("the documentation's example applies as it stands, and then plans nothing", async () => {
      const guide = await readFile(join(import.meta.dirname, '../../../../docs/config-as-code.md'), 'utf8')
      const example = /```yaml\n([\s\S]*?)```/.exec(guide)?.[1]
      assert.ok(example, 'docs/config-as-code.md has a YAML example')
      const file = join(dir, 'example.yaml')
      await writeFile(file, example)
      const env = { ORDERS_HOOK_SECRET: 'example-secret' }
      const apply = await cli(['apply', file], env)
      assert.equal(apply.code, 0, apply.stderr)
      assert.match(apply.stdout, /\+ create audiences "Frequent Buyers"/)
      assert.equal((await cli(['plan', file, '--exit-code'], env)).code, 0)
    })

    test('an invalid file prints each problem with its pointer, and applies nothing', async () => {
      const file = join(dir, 'bad.yaml')
      await writeFile(
        file,
        'version: 1\nsources:\n  Extra: {}\ndestinations:\n  Broken:\n    settings:\n      webhooks: [{ url: "not a url" }]\n',
      )
      const apply = await cli(['apply', file])
      assert.equal(apply.code, 1)
      assert.match(apply.stderr, /nothing was applied/)
      assert.match(apply.stderr, /\/destinations\/Broken\/settings\/webhooks\/0\/url: /)
      const names = (await sluice.api('GET', '/api/v1/sources')).body.sources.map(
        (s: { name: string }) => s.name,
      )
      assert.ok(!names.includes('Extra'))

      await writeFile(join(dir, 'broken.json'), '{"version": 1,')
      const unreadable = await cli(['plan', join(dir, 'broken.json')])
      assert.equal(unreadable.code, 1)
      assert.match(unreadable.stderr, /is not valid JSON/)
      const wrongToken = await cli(['export'], { SLUICE_ADMIN_TOKEN: 'wrong-token-0123456789abcdef' })
      assert.equal(wrongToken.code, 1)
      assert.match(wrongToken.stderr, /answered 401/)
    })
  })
}
