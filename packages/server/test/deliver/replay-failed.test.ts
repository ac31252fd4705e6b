/**
 * A replay whose steps keep failing (here: PostgreSQL refuses its deliveries, through a trigger) ends
 * FAILED with the database's reason after a few tries, instead of running for ever; live calls to the
 * same destination are unaffected.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { startTestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'
import { until } from '../reliability/helpers.ts'
import { freshDatabase } from '../store/pg.ts'
import { startReceiver } from './receivers.ts'

test('a replay whose steps keep failing is FAILED with the reason; live calls still go', async () => {
  const database = await freshDatabase()
  const receiver = await startReceiver()
  const sluice = await startTestSluice({ databaseUrl: database.url })
  const client = new pg.Client({ connectionString: database.url })
  try {
    await client.connect()
    const source = await sluice.createSource('refused history')
    const created = await sluice.api('POST', '/api/v1/destinations', {
      name: 'refusing',
      type: 'webhooks',
      enabled: false,
      sourceIds: [source.id],
      settings: { webhooks: [{ url: `${receiver.url}/in` }] },
    })
    assert.equal(created.status, 201)
    const from = new Date(Date.now() - 1_000).toISOString()
    const batch = Array.from({ length: 3 }, (_, i) => ({
      type: 'track',
      userId: 'u',
      event: 'E',
      messageId: `old-${i}`,
    }))
    assert.equal((await send(sluice.url, '/v1/batch', { batch }, { writeKey: source.writeKey })).status, 200)
    assert.equal(
      (await sluice.api('PATCH', `/api/v1/destinations/${created.body.id}`, { enabled: true })).status,
      200,
    )
    await client.query(`
      CREATE FUNCTION refuse_replayed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'replayed deliveries refused by the test'; END $$;
      CREATE TRIGGER refuse_replayed BEFORE INSERT ON deliveries
        FOR EACH ROW WHEN (NEW.replay_id IS NOT NULL) EXECUTE FUNCTION refuse_replayed();`)
    const started = await sluice.api('POST', `/api/v1/destinations/${created.body.id}/replays`, {
      from,
      to: new Date(Date.now() + 10).toISOString(),
    })
    assert.equal(started.status, 201)
    const ended = await until(
      'the replay to fail',
      async () =>
        (await sluice.api('GET', `/api/v1/destinations/${created.body.id}/replays/${started.body.id}`)).body,
      (replay) => replay.status !== 'RUNNING',
      20_000,
      100,
    )
    assert.equal(ended.status, 'FAILED')
    assert.match(ended.error, /replayed deliveries refused by the test/)
    assert.equal(ended.enqueued, 0)
    assert.ok(ended.finishedAt)
    await send(
      sluice.url,
      '/v1/batch',
      { batch: [{ type: 'track', userId: 'u', event: 'E', messageId: 'live-1' }] },
      { writeKey: source.writeKey },
    )
    await until(
      'the live call',
      () => receiver.requests.length,
      (n) => n === 1,
    )
    assert.equal(receiver.requests[0]!.headers['x-sluice-replay'], undefined)
  } finally {
    await client.end()
    await sluice.close()
    await receiver.close()
    await database.drop()
  }
})
