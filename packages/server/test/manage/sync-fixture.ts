/**
 * What the audience and computed-trait API tests start from: a real Sluice, a real receiver, a source
 * to send calls to, and a signed webhooks destination connected to no source, which only the syncs of
 * the computations connected to it reach.
 */
import { type Receiver, startReceiver } from '../deliver/receivers.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'
import { send } from '../helpers/tracking.ts'

export interface SyncFixture {
  sluice: TestSluice
  receiver: Receiver
  writeKey: string
  destinationId: string
  /** Sends `calls` as one `/v1/batch` request of the source. */
  batch(calls: Record<string, unknown>[]): ReturnType<typeof send>
  /** Every body the receiver got, parsed. */
  // any: tests read arbitrary JSON members.
  bodies(): any[]
  close(): Promise<void>
}

export async function startSyncFixture(destination: {
  name: string
  path: string
  secret: string
}): Promise<SyncFixture> {
  const sluice = await startTestSluice()
  const receiver = await startReceiver()
  const writeKey = (await sluice.createSource()).writeKey
  const created = await sluice.api('POST', '/api/v1/destinations', {
    name: destination.name,
    type: 'webhooks',
    sourceIds: [],
    settings: { webhooks: [{ url: `${receiver.url}${destination.path}` }], sharedSecret: destination.secret },
  })
  return {
    sluice,
    receiver,
    writeKey,
    destinationId: created.body.id,
    batch: (calls) => send(sluice.url, '/v1/batch', { batch: calls }, { writeKey }),
    bodies: () => receiver.requests.map((request) => JSON.parse(request.body.toString('utf8'))),
    async close() {
      await sluice.destroy()
      await receiver.close()
    },
  }
}
