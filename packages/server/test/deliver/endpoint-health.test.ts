/**
 * Endpoint health end to end, on SQLite and PostgreSQL: real Sluice, real recording receivers.
 * Per-URL health (also for batches), 410 and auto-disabling, a destination whose every URL is
 * disabled waiting, enabling, Retry-After (per URL, capped), AIMD concurrency, maxRequestsPerSecond,
 * and signed, rate-limited alerts with their notices.
 */
import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { after, before, describe, test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { Webhook as SvixWebhook } from 'svix'
import type { Source } from '../../src/domain/sources.ts'
import { sampleValue, scrape } from '../helpers/metrics.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'
import { freshDatabase } from '../store/pg.ts'
import { type Receiver, type Respond, sleep, startReceiver } from './receivers.ts'

const backends = [
  { name: 'SQLite', database: async () => ({ url: undefined, drop: async () => {} }) },
  { name: 'PostgreSQL', database: async () => freshDatabase() },
]

/** One hour of `autoDisable.afterHours`, in these tests. */
const TEST_HOUR_MS = 300
const WINDOW_MS = 2_500

interface HealthView {
  url: string
  state: 'healthy' | 'failing' | 'disabled'
  consecutiveFailures: number
  lastSuccessAt: string | null
  lastFailureAt: string | null
  lastError: string | null
  successRate1h: number | null
  disabledAt: string | null
  disabledReason: string | null
}

interface Notice {
  id: string
  type: string
  data: Record<string, unknown>
  alertStatus: string
}

const answer =
  (status: number, headers: Record<string, string> = {}): Respond =>
  (_req, res) => {
    res.writeHead(status, headers)
    res.end(String(status))
  }

for (const backend of backends) {
  describe(`endpoint health (${backend.name})`, () => {
    let sluice: TestSluice
    let drop: () => Promise<void>
    const receivers: Receiver[] = []

    before(async () => {
      const database = await backend.database()
      drop = database.drop
      sluice = await startTestSluice({
        ...(database.url ? { databaseUrl: database.url } : {}),
        retry: { baseDelayMs: 30, maxDelayMs: 60, windowMs: WINDOW_MS },
        autoDisableHourMs: TEST_HOUR_MS,
      })
    })
    after(async () => {
      await sluice.close()
      for (const receiver of receivers) await receiver.close()
      await drop()
    })

    async function receiver(respond?: Respond): Promise<Receiver> {
      const started = await startReceiver(respond)
      receivers.push(started)
      return started
    }

    /** A receiver that also notes when each request arrived. */
    async function timedReceiver(respond: Respond = answer(200)) {
      const arrivals: number[] = []
      const started = await receiver((req, res, body) => {
        arrivals.push(Date.now())
        respond(req, res, body)
      })
      return { receiver: started, arrivals }
    }

    async function destination(urls: string[], settings: Record<string, unknown> = {}) {
      const source = await sluice.createSource(`health ${receivers.length}`)
      const created = await sluice.api('POST', '/api/v1/destinations', {
        name: `health ${receivers.length} ${Math.random()}`,
        type: 'webhooks',
        sourceIds: [source.id],
        settings: { webhooks: urls.map((url) => ({ url })), ...settings },
      })
      assert.equal(created.status, 201, JSON.stringify(created.body))
      return { source, id: created.body.id as string }
    }

    async function track(source: Source, count: number, prefix: string) {
      const batch = Array.from({ length: count }, (_, i) => ({
        type: 'track',
        userId: `user-${i}`,
        event: 'Order Completed',
        messageId: `${prefix}-${i}-${Math.random()}`,
      }))
      const response = await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })
      assert.equal(response.status, 200, response.text)
    }

    async function health(id: string): Promise<HealthView[]> {
      const got = await sluice.api('GET', `/api/v1/destinations/${id}`)
      assert.equal(got.status, 200, JSON.stringify(got.body))
      return got.body.health as HealthView[]
    }

    async function deliveries(id: string) {
      const listed = await sluice.api('GET', `/api/v1/destinations/${id}/deliveries?limit=500`)
      assert.equal(listed.status, 200)
      return listed.body.deliveries as {
        status: string
        deadLettered: boolean
        nextAttemptAt: string | null
      }[]
    }

    async function notices(): Promise<Notice[]> {
      const listed = await sluice.api('GET', '/api/v1/notices?limit=500')
      assert.equal(listed.status, 200, JSON.stringify(listed.body))
      return listed.body.notices as Notice[]
    }

    test('a URL failing beside a working one is failing although its deliveries are delivered; metrics per state', async () => {
      const failing = await receiver(answer(500))
      const working = await receiver()
      const { source, id } = await destination([`${failing.url}/a`, `${working.url}/b`])
      await track(source, 3, 'beside')
      await until(
        '3 delivered',
        () => deliveries(id),
        (list) => list.filter((d) => d.status === 'delivered').length === 3,
      )
      const [bad, good] = await health(id)
      assert.equal(bad?.state, 'failing')
      assert.equal(bad?.consecutiveFailures, 3)
      assert.match(bad?.lastError ?? '', /500/)
      assert.equal(bad?.successRate1h, 0)
      assert.equal(bad?.lastSuccessAt, null)
      assert.ok(bad?.lastFailureAt)
      assert.equal(good?.state, 'healthy')
      assert.equal(good?.consecutiveFailures, 0)
      assert.equal(good?.successRate1h, 1)
      assert.ok(good?.lastSuccessAt)
      const samples = await until(
        'the state metrics',
        () => scrape(sluice.url, sluice.adminToken),
        (s) =>
          sampleValue(s, 'sluice_destination_url_state', {
            destination: id,
            url_index: '0',
            state: 'failing',
          }) === 1,
      )
      assert.equal(
        sampleValue(samples, 'sluice_destination_url_state', {
          destination: id,
          url_index: '1',
          state: 'healthy',
        }),
        1,
      )
      assert.equal(
        sampleValue(samples, 'sluice_destination_url_consecutive_failures', {
          destination: id,
          url_index: '0',
        }),
        3,
      )
    })

    test('batches count too: a URL failing beside a working one is failing', async () => {
      const failing = await receiver(answer(503))
      const working = await receiver()
      const { source, id } = await destination([`${failing.url}/a`, `${working.url}/b`], {
        batching: { maxEvents: 5, maxBytes: 512_000, maxWaitMs: 0 },
      })
      await track(source, 5, 'batch')
      await until(
        '5 delivered',
        () => deliveries(id),
        (list) => list.filter((d) => d.status === 'delivered').length === 5,
      )
      const [bad, good] = await health(id)
      assert.equal(bad?.state, 'failing')
      assert.ok((bad?.consecutiveFailures ?? 0) >= 1)
      assert.equal(good?.state, 'healthy')
    })

    test('410 disables a URL at once; its deliveries wait, nothing is dropped, until it is enabled', async () => {
      let gone = true
      const target = await receiver((_req, res) => answer(gone ? 410 : 200)(_req, res, Buffer.alloc(0)))
      const { source, id } = await destination([`${target.url}/gone?key=s3cret`])
      await track(source, 1, 'gone')
      await until(
        'the URL disabled',
        () => health(id),
        ([h]) => h?.state === 'disabled',
      )
      const [disabled] = await health(id)
      assert.match(disabled?.disabledReason ?? '', /410/)
      assert.equal(target.requests.length, 1)
      gone = false
      // Every URL disabled: new deliveries wait and no request is sent.
      await track(source, 2, 'waiting')
      await sleep(600)
      assert.equal(target.requests.length, 1, 'a disabled URL got a request')
      const waiting = await deliveries(id)
      assert.equal(waiting.filter((d) => d.status === 'pending' || d.status === 'retrying').length, 2)
      const bad = await sluice.api('POST', `/api/v1/destinations/${id}/urls/3/enable`)
      assert.equal(bad.status, 400)
      assert.match(bad.body.error.message, /index must be from 0 to 0/)
      const enabled = await sluice.api('POST', `/api/v1/destinations/${id}/urls/0/enable`)
      assert.equal(enabled.status, 200, JSON.stringify(enabled.body))
      assert.notEqual(enabled.body.health[0].state, 'disabled')
      await until(
        'the waiting deliveries delivered',
        () => deliveries(id),
        (list) => list.filter((d) => d.status === 'delivered').length === 2,
      )
      assert.equal(target.requests.length, 3)
      assert.ok(
        (await notices()).some(
          (n) => n.type === 'destination.url.disabled' && n.data.url === `${target.url}/gone?key=s3cret`,
        ),
      )
      // A viewer reads the notices too, with the URL's secret parts masked as everywhere.
      const viewer = await sluice.api('POST', '/api/v1/tokens', { name: `viewer ${id}`, role: 'viewer' })
      const seen = await fetch(`${sluice.url}/api/v1/notices`, {
        headers: { authorization: `Bearer ${viewer.body.token}` },
      })
      assert.equal(seen.status, 200)
      const text = await seen.text()
      assert.ok(text.includes(`${target.url}/gone?key=`), text.slice(0, 500))
      assert.ok(!text.includes('s3cret'))
      const refused = await fetch(`${sluice.url}/api/v1/alerts`, {
        headers: { authorization: `Bearer ${viewer.body.token}` },
      })
      assert.equal(refused.status, 403)
    })

    test('autoDisable disables a URL whose every request failed that long; its deliveries wait until the window ends', async () => {
      const { receiver: target, arrivals } = await timedReceiver(answer(500))
      const { source, id } = await destination([`${target.url}/down`], { autoDisable: { afterHours: 1 } })
      await track(source, 1, 'auto')
      await until(
        'the URL auto-disabled',
        () => health(id),
        ([h]) => h?.state === 'disabled',
        5_000,
      )
      const [disabled] = await health(id)
      assert.match(disabled?.disabledReason ?? '', /1 hour/)
      const sent = target.requests.length
      // Disabled no sooner than one (test) hour after the first failure, after several failed requests.
      const failedFor = Date.parse(disabled?.disabledAt ?? '') - (arrivals[0] ?? Number.NaN)
      // The streak starts when the first request left Sluice, a moment before the receiver saw it.
      assert.ok(failedFor >= TEST_HOUR_MS - 25, `disabled after ${failedFor} ms of failures`)
      assert.ok(arrivals.length >= 3, `${arrivals.length} requests`)
      await sleep(300)
      assert.ok(target.requests.length <= sent + 1, 'requests went on after disabling')
      // Waiting, never dropped: dead-lettered (replayable) once the retry window is over.
      const [dead] = await until(
        'the waiting delivery dead-lettered',
        () => deliveries(id),
        ([d]) => d?.deadLettered === true,
        WINDOW_MS + 5_000,
      )
      assert.equal(dead?.status, 'failed')
    })

    test('Retry-After makes that URL alone wait, as asked (seconds or HTTP date), capped at 10 minutes', async () => {
      let first = true
      const { receiver: slow, arrivals: slowArrivals } = await timedReceiver((_req, res) => {
        if (first) {
          first = false
          answer(429, { 'retry-after': '1' })(_req, res, Buffer.alloc(0))
        } else answer(200)(_req, res, Buffer.alloc(0))
      })
      const { receiver: other, arrivals: otherArrivals } = await timedReceiver()
      const throttled = await destination([`${slow.url}/slow`])
      const unaffected = await destination([`${other.url}/other`])
      await track(throttled.source, 1, 'ra')
      await until(
        'the 429',
        () => slow.requests.length,
        (n) => n === 1,
      )
      await track(throttled.source, 1, 'ra-second')
      await track(unaffected.source, 3, 'other')
      await until(
        'both delivered',
        () => deliveries(throttled.id),
        (l) => l.filter((d) => d.status === 'delivered').length === 2,
        10_000,
      )
      await until(
        'the other destination served',
        () => other.requests.length,
        (n) => n === 3,
      )
      // The throttled URL waited the second it was asked to; the other destination did not wait for it.
      const [asked = 0, next = 0] = slowArrivals
      assert.ok(next - asked >= 950, `the throttled URL's next request came ${next - asked} ms after the 429`)
      assert.ok(Math.max(...otherArrivals) < next, 'another destination waited for the throttled one')

      // An HTTP date, an hour away: capped at 10 minutes.
      const parked = await receiver(
        answer(503, { 'retry-after': new Date(Date.now() + 3_600_000).toUTCString() }),
      )
      const capped = await destination([`${parked.url}/parked`])
      await track(capped.source, 1, 'cap')
      await until(
        'the 503',
        () => parked.requests.length,
        (n) => n === 1,
      )
      await sleep(100)
      const pause =
        sluice.sluice.engine.endpoints.pressure(capped.id, `${parked.url}/parked`).pausedUntil - Date.now()
      assert.ok(pause > 9 * 60_000 && pause <= 10 * 60_000, `the URL waits ${pause} ms`)
      // It gets nothing meanwhile, although its delivery's retry comes due (the test's window is short).
      await sleep(500)
      assert.equal(parked.requests.length, 1)
    })

    test('429s lower a URL’s concurrency (halved), which grows back one at a time on successes', async () => {
      let throttling = true
      let inFlight = 0
      const seen: { throttling: boolean; inFlight: number }[] = []
      // The first 16 requests are answered together once the 16th has arrived (or after 1 s): on a
      // loaded machine the engine's first sends can be spread over more than one 20 ms answer, and
      // an early 429 would halve the concurrency this test first reads.
      const firstRound: (() => void)[] = []
      const releaseFirstRound = () => {
        for (const release of firstRound.splice(0)) release()
      }
      const target = await receiver((_req, res: ServerResponse) => {
        inFlight++
        seen.push({ throttling, inFlight })
        const respond = () =>
          setTimeout(() => {
            inFlight--
            answer(throttling ? 429 : 200)(_req, res, Buffer.alloc(0))
          }, 20)
        if (seen.length > 16) {
          respond()
          return
        }
        firstRound.push(respond)
        if (seen.length === 1) setTimeout(releaseFirstRound, 1_000)
        if (seen.length === 16) releaseFirstRound()
      })
      const { source, id } = await destination([`${target.url}/aimd`])
      await track(source, 80, 'aimd')
      await until(
        'a few rounds of 429s',
        () => seen.length,
        (n) => n >= 120,
        20_000,
      )
      throttling = false
      // Every delivery settles: delivered, or dead-lettered when this file's short retry window
      // (2.5 s) ran out while its URL still answered 429 — on a loaded machine the 429 rounds last
      // longer than that. Either way nothing is left waiting, and enough successes follow to grow.
      await until(
        'all settled',
        () => deliveries(id),
        (l) => l.length === 80 && l.every((d) => d.status === 'delivered' || d.status === 'failed'),
        30_000,
      )
      const firstRoundInFlight = Math.max(
        ...seen
          .filter((s) => s.throttling)
          .slice(0, 32)
          .map((s) => s.inFlight),
      )
      const afterThrottling = seen.filter((s) => !s.throttling)
      assert.ok(afterThrottling.length >= 20, `only ${afterThrottling.length} requests after the 429s`)
      const early = Math.max(...afterThrottling.slice(0, 6).map((s) => s.inFlight))
      const later = Math.max(...afterThrottling.map((s) => s.inFlight))
      assert.ok(firstRoundInFlight >= 16, `the first round had ${firstRoundInFlight} in flight`)
      assert.ok(early <= 3, `${early} in flight right after the 429s`)
      assert.ok(later > early, `concurrency did not grow back (${early} → ${later})`)
    })

    test('maxRequestsPerSecond caps a destination’s rate; another destination is not held back', async () => {
      const { receiver: capped, arrivals: cappedArrivals } = await timedReceiver()
      const { receiver: free, arrivals: freeArrivals } = await timedReceiver()
      const slow = await destination([`${capped.url}/capped`], { maxRequestsPerSecond: 10 })
      const fast = await destination([`${free.url}/free`])
      await track(slow.source, 15, 'rate')
      await track(fast.source, 15, 'free')
      await until(
        'the uncapped destination served',
        () => free.requests.length,
        (n) => n === 15,
        10_000,
      )
      await until(
        'the capped destination served',
        () => capped.requests.length,
        (n) => n === 15,
        10_000,
      )
      const span = (times: number[]) => Math.max(...times) - Math.min(...times)
      // 15 requests at 10 a second (a burst of one): 14 gaps of 100 ms at least.
      assert.ok(span(cappedArrivals) >= 1_300, `15 capped requests took ${span(cappedArrivals)} ms`)
      assert.ok(
        Math.max(...freeArrivals) < Math.max(...cappedArrivals),
        'the uncapped destination was held back',
      )
    })

    test('alerts: signed with Standard Webhooks, retried, rate-limited, shown as notices', async () => {
      let refuse = true
      const alerts = await receiver((_req, res) => {
        const status = refuse ? 500 : 204
        refuse = false
        answer(status)(_req, res, Buffer.alloc(0))
      })
      // A given secret follows a destination's rules, in the same words.
      const refusals: [string, RegExp][] = [
        ['whsec_c2hvcnQ=', /^sharedSecret encodes 5 bytes; it must encode 24 to 64/],
        [`whsec_${Buffer.alloc(65, 1).toString('base64')}`, /encodes 65 bytes; it must encode 24 to 64/],
        ['whsec_not base64!!', /^sharedSecret is not base64 after "whsec_"/],
        ['c2hvcnQ=', /^sharedSecret must start with "whsec_"/],
      ]
      for (const [sharedSecret, message] of refusals) {
        const refused = await sluice.api('PUT', '/api/v1/alerts', {
          url: `${alerts.url}/alerts`,
          sharedSecret,
        })
        assert.equal(refused.status, 400)
        assert.equal(refused.body.error.field, '/sharedSecret')
        assert.match(refused.body.error.message, message)
      }
      const unknown = await sluice.api('PUT', '/api/v1/alerts', {
        url: `${alerts.url}/alerts`,
        events: ['nope'],
      })
      assert.equal(unknown.status, 400)
      assert.equal(unknown.body.error.field, '/events/0')
      const put = await sluice.api('PUT', '/api/v1/alerts', { url: `${alerts.url}/alerts` })
      assert.equal(put.status, 200, JSON.stringify(put.body))
      const secret = put.body.sharedSecret as string
      assert.match(
        secret,
        /^whsec_[A-Za-z0-9+/]{43}=$/,
        'whsec_ and base64 of 32 bytes, as for a destination',
      )
      const shown = await sluice.api('GET', '/api/v1/alerts')
      assert.equal(shown.status, 200)
      assert.notEqual(shown.body.sharedSecret, secret)
      assert.ok(!shown.body.sharedSecret.includes(secret.slice(6, 20)))

      let downAnswers = 500
      const down = await receiver((_req, res) => answer(downAnswers)(_req, res, Buffer.alloc(0)))
      const { source, id } = await destination([`${down.url}/down`])
      await track(source, 3, 'alerting')
      const verifier = new Webhook(secret)
      const svixVerifier = new SvixWebhook(secret)
      const delivered = () =>
        alerts.requests
          .filter((r) => r.headers['webhook-id'] !== undefined)
          .map((r) => ({
            request: r,
            body: JSON.parse(r.body.toString('utf8')) as { type: string; data: Record<string, unknown> },
          }))
      await until(
        'the failing alert',
        delivered,
        (list) =>
          list.some((a) => a.body.type === 'destination.url.failing' && a.body.data.destinationId === id),
        8_000,
      )
      await until(
        'the dead-letter alert',
        delivered,
        (list) =>
          list.some((a) => a.body.type === 'delivery.dead_lettered' && a.body.data.destinationId === id),
        WINDOW_MS + 8_000,
      )
      await sleep(300)
      const mine = delivered().filter((a) => a.body.data.destinationId === id)
      // Every alert verifies with both libraries a receiver would use, unchanged.
      for (const { request } of mine) {
        const headers = {
          'webhook-id': String(request.headers['webhook-id']),
          'webhook-timestamp': String(request.headers['webhook-timestamp']),
          'webhook-signature': String(request.headers['webhook-signature']),
        }
        verifier.verify(request.body.toString('utf8'), headers)
        svixVerifier.verify(request.body.toString('utf8'), headers)
      }
      // Rate-limited: one failing alert for the URL (well over 20 failures), one dead-letter alert.
      const failingIds = new Set(
        mine
          .filter((a) => a.body.type === 'destination.url.failing')
          .map((a) => a.request.headers['webhook-id']),
      )
      assert.equal(failingIds.size, 1)
      const failures = (await health(id))[0]?.consecutiveFailures ?? 0
      assert.ok(failures >= 40, `${failures} failures`)
      const deadLetters = mine.filter((a) => a.body.type === 'delivery.dead_lettered')
      assert.equal(new Set(deadLetters.map((a) => a.request.headers['webhook-id'])).size, 1)
      assert.ok(Number(deadLetters[0]?.body.data.count) >= 1)
      // The first alert was refused with 500 and sent again with the same webhook-id.
      const firstId = alerts.requests[0]?.headers['webhook-id']
      assert.ok(alerts.requests.filter((r) => r.headers['webhook-id'] === firstId).length >= 2)
      // Notices list them, the delivered ones as delivered.
      const listed = await notices()
      const failingNotice = listed.find(
        (n) => n.type === 'destination.url.failing' && n.data.destinationId === id,
      )
      assert.equal(failingNotice?.alertStatus, 'delivered')
      // Recovered: the URL succeeds again after its alerted streak.
      downAnswers = 200
      await track(source, 1, 'recovering')
      await until(
        'the recovered alert',
        delivered,
        (list) =>
          list.some((a) => a.body.type === 'destination.url.recovered' && a.body.data.destinationId === id),
        5_000,
      )
      // Regulations: a suppression finishes at once, a deletion once erased.
      for (const regulationType of ['SUPPRESS_ONLY', 'DELETE_ONLY']) {
        const regulation = await sluice.api('POST', '/api/v1/regulations', {
          regulationType,
          subjectIds: [`alert-${regulationType}`],
        })
        assert.equal(regulation.status, 201, JSON.stringify(regulation.body))
        await until(
          `the regulation.finished alert (${regulationType})`,
          delivered,
          (list) =>
            list.some(
              (a) => a.body.type === 'regulation.finished' && a.body.data.regulationId === regulation.body.id,
            ),
          10_000,
        )
      }
      for (const { request } of delivered()) {
        const headers = {
          'webhook-id': String(request.headers['webhook-id']),
          'webhook-timestamp': String(request.headers['webhook-timestamp']),
          'webhook-signature': String(request.headers['webhook-signature']),
        }
        verifier.verify(request.body.toString('utf8'), headers)
        svixVerifier.verify(request.body.toString('utf8'), headers)
      }
      const removed = await sluice.api('DELETE', '/api/v1/alerts')
      assert.equal(removed.status, 204)
    })

    test('settings: autoDisable and maxRequestsPerSecond out of range are refused with where and why', async () => {
      const target = await receiver()
      const source = await sluice.createSource('settings')
      for (const [settings, field] of [
        [{ autoDisable: { afterHours: 0 } }, '/settings/autoDisable/afterHours'],
        [{ autoDisable: { afterHours: 721 } }, '/settings/autoDisable/afterHours'],
        [{ maxRequestsPerSecond: 0 }, '/settings/maxRequestsPerSecond'],
      ] as const) {
        const created = await sluice.api('POST', '/api/v1/destinations', {
          name: 'refused',
          type: 'webhooks',
          sourceIds: [source.id],
          settings: { webhooks: [{ url: `${target.url}/x` }], ...settings },
        })
        assert.equal(created.status, 400, JSON.stringify(created.body))
        assert.equal(created.body.error.field, field)
      }
    })
  })
}
