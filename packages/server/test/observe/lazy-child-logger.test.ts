// Fastify's per-request logger is made only when a request logs: what reaches the log is unchanged.
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { test } from 'node:test'
import { pino } from 'pino'
import { LazyChildLogger } from '../../src/lib/lazy-child-logger.ts'

function capture(level: string) {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line))
      done()
    },
  })
  return { lines, logger: pino({ level, base: { service: 'test' } }, stream) }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

test('lines at enabled levels carry the request id; lines below the level are dropped', async () => {
  const { lines, logger } = capture('warn')
  const child = new LazyChildLogger(logger, { reqId: 'req-7' }, {})
  child.info('not shown')
  child.debug({ a: 1 }, 'not shown either')
  child.warn({ code: 'x' }, 'shown')
  child.error(new Error('boom'), 'failed')
  await settle()
  assert.deepEqual(
    lines.map((line) => [line.level, line.reqId, line.service, line.msg]),
    [
      [40, 'req-7', 'test', 'shown'],
      [50, 'req-7', 'test', 'failed'],
    ],
  )
  assert.equal(lines[0]!.code, 'x')
  assert.equal((lines[1]!.err as { message: string }).message, 'boom')
  assert.equal(child.level, 'warn')
})

test('a level of its own (a route log level) and children of the child behave as pino children', async () => {
  const { lines, logger } = capture('warn')
  const child = new LazyChildLogger(logger, { reqId: 'req-8' }, { level: 'debug' })
  assert.equal(child.level, 'debug')
  child.debug('shown at the route level')
  child.child({ part: 'inner' }).info('inner line')
  child.level = 'error'
  child.warn('now below the level')
  await settle()
  assert.deepEqual(
    lines.map((line) => [line.level, line.reqId, line.part, line.msg]),
    [
      [20, 'req-8', undefined, 'shown at the route level'],
      [30, 'req-8', 'inner', 'inner line'],
    ],
  )
})
