/**
 * Standard Webhooks signatures and secret rotation, end to end on both stores: a real Sluice, real
 * recording receivers, and every request verified by the `standardwebhooks` and `svix` libraries as
 * a receiver would use them, unchanged. Also: the secret made and shown once, retries and batches
 * keeping their webhook-id, a rotation's grace (both signatures, X-Signature-Next) and its end (only
 * the new secret), rotations listed by time, secrets sealed at rest, configuration as code, bad input.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { Webhook as SvixWebhook } from 'svix'
import type { Source } from '../../src/domain/sources.ts'
import { startTestSluice, TEST_SECRET_KEY, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { startRole, stopChild } from '../postgres/harness.ts'
import { assertJsonError, until } from '../reliability/helpers.ts'
import { freshDatabase, withAdmin } from '../store/pg.ts'
import {
  opensslHmacSha1,
  type Receiver,
  type RecordedRequest,
  type Respond,
  sleep,
  startReceiver,
} from './receivers.ts'

const backends = [
  { name: 'SQLite', database: async () => ({ url: undefined, drop: async () => {} }) },
  { name: 'PostgreSQL', database: async () => freshDatabase() },
]

/** The three Standard Webhooks headers of a recorded request, as both libraries take them. */
function webhookHeaders(request: RecordedRequest): Record<string, string> {
  return {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  }
}

/** Whether `secret` verifies the request with each library: [standardwebhooks, svix]. */
/** Grace of the cross-process rotation: long enough for a loaded machine to deliver inside it. */
const CROSS_PROCESS_GRACE_S = 15

function verifiedBy(request: RecordedRequest, secret: string): [boolean, boolean] {
  const body = request.body.toString('utf8')
  const headers = webhookHeaders(request)
  const attempt = (verify: () => unknown) => {
    try {
      verify()
      return true
    } catch {
      return false
    }
  }
  return [
    attempt(() => new StandardWebhook(secret).verify(body, headers)),
    attempt(() => new SvixWebhook(secret).verify(body, headers)),
  ]
}

function assertVerifies(request: RecordedRequest, secret: string, label: string): void {
  assert.deepEqual(
    verifiedBy(request, secret),
    [true, true],
    `${label}: verified by standardwebhooks and svix`,
  )
}

for (const backend of backends) {
  describe(`Standard Webhooks and secret rotation (${backend.name})`, () => {
    let sluice: TestSluice
    let databaseUrl: string | undefined
    let drop: () => Promise<void>
    const receivers: Receiver[] = []

    before(async () => {
      const database = await backend.database()
      databaseUrl = database.url
      drop = database.drop
      sluice = await startTestSluice({
        ...(database.url ? { databaseUrl: database.url } : {}),
        retry: { baseDelayMs: 50, maxDelayMs: 100, windowMs: 5_000 },
      })
    })
    after(async () => {
      await sluice.close()
      for (const receiver of receivers) await receiver.close()
      await drop()
    })

    async function setUp(settings: Record<string, unknown>, respond?: Respond) {
      const receiver = await startReceiver(respond)
      receivers.push(receiver)
      const source = await sluice.createSource(`signed ${receivers.length}`)
      const created = await sluice.api('POST', '/api/v1/destinations', {
        name: `signed ${receivers.length}`,
        type: 'webhooks',
        sourceIds: [source.id],
        settings: { webhooks: [{ url: `${receiver.url}/in` }], ...settings },
      })
      assert.equal(created.status, 201, JSON.stringify(created.body))
      return { receiver, source, destinationId: created.body.id as string, created: created.body }
    }

    async function track(source: Source, messageId: string) {
      const response = await send(
        sluice.url,
        '/v1/track',
        { userId: 'u1', event: 'Order Completed', messageId, properties: { total: 42 } },
        { writeKey: source.writeKey },
      )
      assert.equal(response.status, 200, response.text)
    }

    async function delivered(receiver: Receiver, marker: string, count = 1): Promise<RecordedRequest[]> {
      const matching = () => receiver.requests.filter((request) => request.body.toString().includes(marker))
      await until(`${count} request(s) carrying ${marker}`, matching, (found) => found.length >= count)
      return matching()
    }

    /**
     * Rotates, then gives the engine a moment: it re-reads destinations when told of a change, but a pass
     * already under way finishes with what it had read (during a grace that still signs with the old secret).
     */
    async function rotate(destinationId: string, body: Record<string, unknown>) {
      const answer = await sluice.api('POST', `/api/v1/destinations/${destinationId}/secrets/rotate`, body)
      await sleep(200)
      return answer
    }

    test('turned on, Sluice makes a whsec_ secret, shows it once, and every request verifies with both libraries', async () => {
      const { receiver, source, destinationId, created } = await setUp({
        sharedSecret: 'legacy-secret',
        signing: { standardWebhooks: true },
      })
      const secret = created.standardWebhooksSecret as string
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'whsec_ and base64 of 32 bytes')
      assert.deepEqual(created.settings.signing, { xSignature: true, standardWebhooks: true })
      assert.equal(created.settings.standardWebhooksSecretSet, true)

      const read = await sluice.api('GET', `/api/v1/destinations/${destinationId}`)
      assert.equal(read.status, 200)
      assert.ok(!JSON.stringify(read.body).includes(secret.slice(6)), 'never shown again')
      assert.equal(read.body.standardWebhooksSecret, undefined)
      const patched = await sluice.api('PATCH', `/api/v1/destinations/${destinationId}`, {
        settings: { method: 'PUT' },
      })
      assert.equal(patched.status, 200)
      assert.equal(patched.body.standardWebhooksSecret, undefined, 'a later save does not show it')
      await sluice.api('PATCH', `/api/v1/destinations/${destinationId}`, { settings: { method: null } })

      const before = Math.floor(Date.now() / 1000)
      await track(source, 'swh-single-1')
      const [request] = await delivered(receiver, 'swh-single-1')
      assert.ok(request)
      assertVerifies(request, secret, 'a single message')
      assert.equal(request.headers['webhook-id'], 'swh-single-1', 'webhook-id is the messageId')
      const timestamp = Number(request.headers['webhook-timestamp'])
      assert.ok(timestamp >= before && timestamp <= Math.floor(Date.now() / 1000) + 1)
      assert.match(String(request.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/)
      assert.equal(request.headers['x-signature'], opensslHmacSha1(request.body, 'legacy-secret'))
      assert.equal(request.headers['x-signature-next'], undefined)
      // A tampered body, or another secret, does not verify.
      const tampered = { ...request, body: Buffer.from(request.body.toString().replace('42', '43')) }
      assert.deepEqual(verifiedBy(tampered, secret), [false, false])
      assert.deepEqual(verifiedBy(request, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'), [false, false])

      // The request as shown for debugging carries the same headers (its timestamp is the next attempt's).
      const deliveries = await sluice.api('GET', `/api/v1/destinations/${destinationId}/deliveries`)
      const shown = await sluice.api('GET', `/api/v1/deliveries/${deliveries.body.deliveries[0].id}/request`)
      assert.equal(shown.status, 200)
      const headers = shown.body.requests[0].headers
      assert.equal(headers['webhook-id'], 'swh-single-1')
      assert.equal(headers['X-Signature'], request.headers['x-signature'])
      assert.match(headers['webhook-signature'], /^v1,/)
    })

    test('without the new settings a request carries exactly the headers it always did', async () => {
      const { receiver, source, created } = await setUp({ sharedSecret: 'plain-secret' })
      assert.deepEqual(created.settings.signing, { xSignature: true, standardWebhooks: false })
      assert.equal(created.settings.standardWebhooksSecretSet, false)
      assert.equal(created.standardWebhooksSecret, undefined)
      await track(source, 'swh-plain-1')
      const [request] = await delivered(receiver, 'swh-plain-1')
      assert.ok(request)
      const names = [...new Set(request.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase()))]
      assert.deepEqual(names.sort(), [
        'connection',
        'content-length',
        'content-type',
        'host',
        'user-agent',
        'x-signature',
      ])
      assert.equal(request.headers['x-signature'], opensslHmacSha1(request.body, 'plain-secret'))
    })

    test('xSignature off leaves X-Signature out while Standard Webhooks signs', async () => {
      const { receiver, source, created } = await setUp({
        sharedSecret: 'unused-secret',
        signing: { xSignature: false, standardWebhooks: true },
      })
      await track(source, 'swh-only-1')
      const [request] = await delivered(receiver, 'swh-only-1')
      assert.ok(request)
      assert.equal(request.headers['x-signature'], undefined)
      assertVerifies(request, created.standardWebhooksSecret, 'Standard Webhooks alone')
    })

    test('a retry keeps its webhook-id, with a fresh timestamp, and verifies each time', async () => {
      let calls = 0
      const { receiver, source, created } = await setUp(
        { signing: { standardWebhooks: true } },
        (_req, res) => {
          calls++
          if (calls === 1) {
            // The second attempt comes after the next whole second, so its timestamp must differ.
            res.writeHead(503, { 'retry-after': '1' }).end('busy')
          } else res.end('ok')
        },
      )
      await track(source, 'swh-retry-1')
      const [first, second] = await delivered(receiver, 'swh-retry-1', 2)
      assert.ok(first && second)
      assert.equal(first.headers['webhook-id'], 'swh-retry-1')
      assert.equal(second.headers['webhook-id'], 'swh-retry-1')
      assert.ok(Number(second.headers['webhook-timestamp']) > Number(first.headers['webhook-timestamp']))
      assertVerifies(first, created.standardWebhooksSecret, 'first attempt')
      assertVerifies(second, created.standardWebhooksSecret, 'the retry')
    })

    test('a batch is signed as one message: webhook-id batch_<id>, the same on its retry', async () => {
      let calls = 0
      const { receiver, source, destinationId, created } = await setUp(
        {
          signing: { standardWebhooks: true },
          batching: { maxEvents: 2, maxBytes: 512_000, maxWaitMs: 60_000 },
        },
        (_req, res) => {
          calls++
          res.writeHead(calls === 1 ? 500 : 200).end()
        },
      )
      await track(source, 'swh-batch-a')
      await track(source, 'swh-batch-b')
      const [first, second] = await delivered(receiver, 'swh-batch-a', 2)
      assert.ok(first && second)
      const members = JSON.parse(second.body.toString()) as { messageId: string }[]
      assert.deepEqual(members.map((member) => member.messageId).sort(), ['swh-batch-a', 'swh-batch-b'])
      const deliveries = await sluice.api('GET', `/api/v1/destinations/${destinationId}/deliveries`)
      const batchId = deliveries.body.deliveries[0].batchId as number
      assert.equal(first.headers['webhook-id'], `batch_${batchId}`)
      assert.equal(second.headers['webhook-id'], `batch_${batchId}`)
      assertVerifies(first, created.standardWebhooksSecret, 'the batch')
      assertVerifies(second, created.standardWebhooksSecret, 'the batch retried')
    })

    test('rotation: both signatures during the grace, X-Signature-Next, then only the new secrets', async () => {
      const { receiver, source, destinationId, created } = await setUp({
        sharedSecret: 'shared-old',
        signing: { standardWebhooks: true },
      })
      const oldWhsec = created.standardWebhooksSecret as string
      const rotated = await rotate(destinationId, { kind: 'standardWebhooks', gracePeriodSeconds: 3 })
      assert.equal(rotated.status, 200, JSON.stringify(rotated.body))
      const newWhsec = rotated.body.secret as string
      assert.match(newWhsec, /^whsec_/)
      assert.notEqual(newWhsec, oldWhsec)
      const given = await rotate(destinationId, {
        kind: 'sharedSecret',
        gracePeriodSeconds: 3,
        secret: 'shared-new',
      })
      assert.equal(given.status, 200, JSON.stringify(given.body))
      assert.equal(given.body.secret, 'shared-new')
      const rotatedAt = Date.parse(given.body.rotation.rotatedAt)
      assert.equal(Date.parse(given.body.rotation.graceEndsAt) - rotatedAt, 3_000)

      await track(source, 'swh-grace-1')
      const [inGrace] = await delivered(receiver, 'swh-grace-1')
      assert.ok(inGrace)
      assert.ok(Date.now() < rotatedAt + 3_000, 'still within the grace (the test was too slow otherwise)')
      const signatures = String(inGrace.headers['webhook-signature']).split(' ')
      assert.equal(signatures.length, 2, 'v1,<new> v1,<old>')
      assertVerifies(inGrace, newWhsec, 'the new secret during the grace')
      assertVerifies(inGrace, oldWhsec, 'the old secret during the grace')
      assert.equal(inGrace.headers['x-signature'], opensslHmacSha1(inGrace.body, 'shared-old'))
      assert.equal(inGrace.headers['x-signature-next'], opensslHmacSha1(inGrace.body, 'shared-new'))

      await sleep(Math.max(0, rotatedAt + 3_100 - Date.now()))
      await track(source, 'swh-after-1')
      const [afterGrace] = await delivered(receiver, 'swh-after-1')
      assert.ok(afterGrace)
      assert.equal(String(afterGrace.headers['webhook-signature']).split(' ').length, 1)
      assertVerifies(afterGrace, newWhsec, 'the new secret after the grace')
      assert.deepEqual(verifiedBy(afterGrace, oldWhsec), [false, false], 'the old secret no longer signs')
      assert.equal(afterGrace.headers['x-signature'], opensslHmacSha1(afterGrace.body, 'shared-new'))
      assert.equal(afterGrace.headers['x-signature-next'], undefined)

      // Listed with their times, newest first; never with a secret.
      const listed = await sluice.api('GET', `/api/v1/destinations/${destinationId}/secrets/rotations`)
      assert.equal(listed.status, 200)
      assert.deepEqual(
        listed.body.rotations.map((rotation: { kind: string }) => rotation.kind),
        ['sharedSecret', 'standardWebhooks'],
      )
      const text = JSON.stringify(listed.body)
      for (const secret of [oldWhsec, newWhsec, 'shared-old', 'shared-new']) assert.ok(!text.includes(secret))
    })

    test('a grace period of 0 switches at once; rotating a kind that had no secret sets one', async () => {
      const { receiver, source, destinationId, created } = await setUp({
        signing: { standardWebhooks: true },
      })
      const rotated = await rotate(destinationId, { kind: 'standardWebhooks', gracePeriodSeconds: 0 })
      assert.equal(rotated.status, 200)
      const shared = await rotate(destinationId, { kind: 'sharedSecret' })
      assert.equal(shared.status, 200)
      assert.equal(shared.body.rotation.graceEndsAt, shared.body.rotation.rotatedAt, 'nothing to overlap')
      await track(source, 'swh-zero-1')
      const [request] = await delivered(receiver, 'swh-zero-1')
      assert.ok(request)
      assertVerifies(request, rotated.body.secret, 'the new secret')
      assert.deepEqual(verifiedBy(request, created.standardWebhooksSecret), [false, false])
      assert.equal(request.headers['x-signature'], opensslHmacSha1(request.body, shared.body.secret))
      assert.equal(request.headers['x-signature-next'], undefined)
    })

    test('secrets are sealed at rest: the database holds neither the whsec nor a rotated-out secret', async () => {
      const { destinationId, created } = await setUp({ signing: { standardWebhooks: true } })
      const rotated = await rotate(destinationId, { kind: 'standardWebhooks' })
      assert.equal(rotated.status, 200)
      const secrets = [created.standardWebhooksSecret as string, rotated.body.secret as string].map(
        (secret) => secret.slice('whsec_'.length),
      )
      let raw: string
      if (databaseUrl === undefined) {
        raw = readdirSync(sluice.dataDir)
          .map((name) => {
            try {
              return readFileSync(join(sluice.dataDir, name)).toString('latin1')
            } catch {
              return ''
            }
          })
          .join('\n')
      } else {
        raw = await withAdmin(async (client) => {
          const rows = await client.query('SELECT settings FROM destinations')
          return JSON.stringify(rows.rows)
        }, databaseUrl)
      }
      assert.ok(raw.length > 0)
      for (const secret of secrets) assert.ok(!raw.includes(secret), 'a whsec secret is in the raw database')
    })

    test('configuration as code: signing is exported and planned, the whsec a $secret placeholder kept on apply', async () => {
      const { destinationId, created } = await setUp({ signing: { standardWebhooks: true } })
      const name = created.name as string
      const exported = await sluice.api('GET', '/api/v1/config')
      assert.equal(exported.status, 200)
      const settings = exported.body.destinations[name].settings
      assert.deepEqual(settings.signing, { xSignature: true, standardWebhooks: true })
      assert.deepEqual(settings.standardWebhooksSecret, {
        $secret: `destinations/${name}/standardWebhooksSecret`,
      })
      assert.ok(!JSON.stringify(exported.body).includes(created.standardWebhooksSecret))
      const again = await sluice.api('POST', '/api/v1/config/plan', exported.body)
      assert.equal(again.status, 200, JSON.stringify(again.body))
      assert.deepEqual(again.body.changes, [], 'an export plans nothing')
      // Left out, the whsec is kept (Sluice made it), as a write key is.
      const { standardWebhooksSecret: _, ...withoutSecret } = settings
      const document = structuredClone(exported.body)
      document.destinations[name].settings = withoutSecret
      assert.deepEqual((await sluice.api('POST', '/api/v1/config/plan', document)).body.changes, [])
      // Turning it off is planned as a change of signing.
      document.destinations[name].settings = { ...withoutSecret, signing: { standardWebhooks: false } }
      const plan = await sluice.api('POST', '/api/v1/config/plan', document)
      assert.deepEqual(
        plan.body.changes.map((change: { fields?: { field: string }[] }) =>
          change.fields?.map((f) => f.field),
        ),
        [['/settings/signing']],
      )
      // A rotation's state is Sluice's own: an apply keeps it.
      const rotated = await rotate(destinationId, { kind: 'standardWebhooks', gracePeriodSeconds: 600 })
      const exportedAgain = await sluice.api('GET', '/api/v1/config')
      const applied = await sluice.api('POST', '/api/v1/config/apply', exportedAgain.body)
      assert.equal(applied.status, 200, JSON.stringify(applied.body))
      const rotations = await sluice.api('GET', `/api/v1/destinations/${destinationId}/secrets/rotations`)
      assert.equal(rotations.body.rotations.length, 1)
      assert.equal(rotations.body.rotations[0].rotatedAt, rotated.body.rotation.rotatedAt)
    })

    test('bad input: 400 naming the field and saying how to fix it; viewers may not rotate', async () => {
      const { destinationId } = await setUp({ signing: { standardWebhooks: true } })
      const refusals: [Record<string, unknown>, string, RegExp][] = [
        [
          { kind: 'standardWebhooks', secret: 'whsec_c2hvcnQ=' },
          '/secret',
          /encodes 5 bytes; it must encode 24 to 64/,
        ],
        [{ kind: 'standardWebhooks', secret: 'whsec_not base64!!' }, '/secret', /is not base64/],
        [
          { kind: 'standardWebhooks', secret: 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
          '/secret',
          /must start with "whsec_"/,
        ],
        [{ kind: 'standardWebhooks', gracePeriodSeconds: 604_801 }, '/gracePeriodSeconds', /604[.,]?800/],
        [{ kind: 'standardWebhooks', gracePeriodSeconds: -1 }, '/gracePeriodSeconds', /0/],
        [{ kind: 'sharedSecret', gracePeriodSeconds: 1.5 }, '/gracePeriodSeconds', /integer|whole/],
        [{ kind: 'apiKey' }, '/kind', /standardWebhooks/],
        [{}, '/kind', /kind/],
      ]
      for (const [body, field, message] of refusals) {
        const response = await fetch(`${sluice.url}/api/v1/destinations/${destinationId}/secrets/rotate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${sluice.adminToken}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
        const text = await response.text()
        const error = assertJsonError(
          response.status,
          response.headers.get('content-type') ?? '',
          text,
          field,
        )
        assert.equal(response.status, 400, text)
        assert.equal(error.field, field, text)
        assert.match(error.message, message)
        for (const value of Object.values(body)) {
          if (typeof value === 'string' && value.startsWith('whsec_'))
            assert.ok(!text.includes(value.slice(6)))
        }
      }
      const rotations = await sluice.api('GET', `/api/v1/destinations/${destinationId}/secrets/rotations`)
      assert.deepEqual(rotations.body.rotations, [], 'nothing was rotated')
      const missing = await rotate('dst_nope', { kind: 'sharedSecret' })
      assert.equal(missing.status, 404)

      const badSetting = await sluice.api('PATCH', `/api/v1/destinations/${destinationId}`, {
        settings: { standardWebhooksSecret: 'whsec_c2hvcnQ=' },
      })
      assert.equal(badSetting.status, 400)
      assert.equal(badSetting.body.error.field, '/settings/standardWebhooksSecret')
      const badSigning = await sluice.api('PATCH', `/api/v1/destinations/${destinationId}`, {
        settings: { signing: { standardWebhooks: 'yes' } },
      })
      assert.equal(badSigning.status, 400)
      assert.equal(badSigning.body.error.field, '/settings/signing/standardWebhooks')
      for (const header of ['webhook-id', 'Webhook-Signature', 'webhook-timestamp', 'X-Signature-Next']) {
        const reserved = await sluice.api('PATCH', `/api/v1/destinations/${destinationId}`, {
          settings: { webhooks: [{ url: 'https://example.com/in', headers: { [header]: 'x' } }] },
        })
        assert.equal(reserved.status, 400, header)
        assert.match(reserved.body.error.message, /set by Sluice/)
      }

      const viewer = await sluice.api('POST', '/api/v1/tokens', { name: 'viewer', role: 'viewer' })
      assert.equal(viewer.status, 201, JSON.stringify(viewer.body))
      const asViewer = await fetch(`${sluice.url}/api/v1/destinations/${destinationId}/secrets/rotate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${viewer.body.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'sharedSecret' }),
      })
      assert.equal(asViewer.status, 403)
    })

    if (backend.name === 'PostgreSQL') {
      test('a rotation made through one process signs in another process, told by a notification, and its grace ends there', async () => {
        const receiver = await startReceiver()
        receivers.push(receiver)
        // A database of its own: this process stores and manages, a worker process alone delivers.
        const database = await freshDatabase()
        const api = await startTestSluice({ databaseUrl: database.url, role: 'api' })
        const source = await api.createSource('cross-process')
        const worker = await startRole('worker', {
          DATABASE_URL: database.url,
          SLUICE_SECRET_KEY: TEST_SECRET_KEY,
          SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true',
          SLUICE_DATA_DIR: api.dataDir,
        })
        try {
          const created = await api.api('POST', '/api/v1/destinations', {
            name: 'cross-process',
            type: 'webhooks',
            sourceIds: [source.id],
            settings: { webhooks: [{ url: `${receiver.url}/in` }], signing: { standardWebhooks: true } },
          })
          assert.equal(created.status, 201)
          const oldWhsec = created.body.standardWebhooksSecret as string
          const sendThrough = async (messageId: string) => {
            const response = await send(
              api.url,
              '/v1/track',
              { userId: 'u', event: 'E', messageId },
              { writeKey: source.writeKey },
            )
            assert.equal(response.status, 200)
            return (await delivered(receiver, messageId))[0]!
          }
          assertVerifies(await sendThrough('swh-worker-1'), oldWhsec, 'before the rotation')
          const rotated = await api.api('POST', `/api/v1/destinations/${created.body.id}/secrets/rotate`, {
            kind: 'standardWebhooks',
            gracePeriodSeconds: CROSS_PROCESS_GRACE_S,
          })
          assert.equal(rotated.status, 200)
          const rotatedAt = Date.parse(rotated.body.rotation.rotatedAt)
          // The worker hears of the rotation by a notification: calls go through until one is signed with
          // the new secret (a fixed 500 ms wait ran out on a loaded machine).
          let probe = 0
          const inGrace = await until(
            'the worker to sign with the new secret',
            () => sendThrough(`swh-worker-2-${probe++}`),
            (request) => verifiedBy(request, rotated.body.secret).every(Boolean),
            30_000,
          )
          assert.ok(Date.now() < rotatedAt + CROSS_PROCESS_GRACE_S * 1000, 'still within the grace')
          assertVerifies(inGrace, oldWhsec, 'and with the old one during the grace')
          await sleep(Math.max(0, rotatedAt + CROSS_PROCESS_GRACE_S * 1000 + 100 - Date.now()))
          const afterGrace = await sendThrough('swh-worker-3')
          assertVerifies(afterGrace, rotated.body.secret, 'after the grace')
          assert.deepEqual(verifiedBy(afterGrace, oldWhsec), [false, false], 'the worker dropped the old one')
        } finally {
          await stopChild(worker)
          await api.close()
          await database.drop()
        }
      })
    }
  })
}
