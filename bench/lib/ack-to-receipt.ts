// Ack-to-receipt latency, shared by the delivery and the profiles benchmarks: a receiver that notes
// when each call first arrives, a sender that posts /v1/batch bodies at a fixed pace and notes when
// each call was acknowledged, and the percentiles of the difference.
import { createServer } from 'node:http'

/** When each key first reached the receiver (epoch ms, fractional). */
export interface RecordingReceiver {
  port: number
  received: Map<string, number>
  close(): void
}

/** An HTTP receiver answering 200 to every POST; `keyOf` names the call a body carries. */
export async function startRecordingReceiver(
  keyOf: (body: Record<string, unknown>) => string,
): Promise<RecordingReceiver> {
  const received = new Map<string, number>()
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const at = performance.timeOrigin + performance.now()
      response.end('ok')
      const key = keyOf(JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>)
      if (!received.has(key)) received.set(key, at)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as { port: number }).port, received, close: () => server.close() }
}

export interface PacedSending {
  base: string
  writeKey: string
  /** One batch every 10 ms for this many ticks. */
  ticks: number
  /** Tick `tick`'s calls. */
  batchAt(tick: number): Record<string, unknown>[]
  /** The key the receiver will know a call by. */
  keyOf(call: Record<string, unknown>): string
}

/** Sends every tick's batch on time (not waiting for answers); when each call's 200 was read. */
export async function sendPaced(sending: PacedSending): Promise<Map<string, number>> {
  const authorization = `Basic ${Buffer.from(`${sending.writeKey}:`).toString('base64')}`
  const acked = new Map<string, number>()
  const sends: Promise<void>[] = []
  const started = performance.now()
  for (let tick = 0; tick < sending.ticks; tick++) {
    const wait = started + tick * 10 - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    const batch = sending.batchAt(tick)
    sends.push(
      fetch(`${sending.base}/v1/batch`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ batch }),
      }).then(async (response) => {
        await response.arrayBuffer()
        const at = performance.timeOrigin + performance.now()
        for (const call of batch) acked.set(sending.keyOf(call), at)
      }),
    )
  }
  await Promise.all(sends)
  return acked
}

/** Waits until every acknowledged call was received, or `timeoutMs` passed. */
export async function awaitReceipts(
  acked: Map<string, unknown>,
  received: Map<string, unknown>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (received.size < acked.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
}

/**
 * Ack-to-receipt latency of each acknowledged call, ms; a call never received counts as infinite. A
 * delivery can land before the client has read its 200: such latencies count as 0.
 */
export function latencies(acked: Iterable<[string, number]>, received: Map<string, number>): number[] {
  return [...acked].map(([key, at]) => Math.max(0, (received.get(key) ?? Number.POSITIVE_INFINITY) - at))
}

export function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}
