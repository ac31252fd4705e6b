/**
 * Bad input: a fast-check fuzzer sends at least 10,000 requests (50,000 with
 * SLUICE_LONG_TESTS=1) to a real Sluice child process — malformed, oversized, wrongly encoded (broken
 * gzip, other charsets), deeply nested, prototype-polluting and mixed valid/invalid — to the Tracking
 * API and every management route, in groups of 128 concurrent requests over 32 keep-alive connections.
 *
 * Every answer must be a non-5xx within the per-request deadline; every error the documented JSON
 * `{"error": {"code", "message"}}` with a message. Afterwards: the same process still answers
 * /healthz, its Object/Array/Function prototypes are untouched (read through inspect-probe.ts), every
 * valid message of a mixed batch is in the store and was delivered with its properties intact,
 * nothing was logged as an error, and memory stayed within the stated bounds.
 *
 * Safety: the fuzzer may create destinations; their URLs can only ever be 127.0.0.1 (by construction,
 * plus a filter and a final check), and they are never connected to the source that receives traffic.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { deflateSync, gzipSync } from 'node:zlib'
import fc from 'fast-check'
import { Pool } from 'undici'
import { RESERVED_HEADER_NAMES } from '../../src/domain/webhook-settings.ts'
import { MAX_NESTING_DEPTH } from '../../src/ingest/validate.ts'
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts'
import { type Receiver, startReceiver } from '../deliver/receivers.ts'
import {
  assertJsonError,
  type InstrumentedSluice,
  LONG,
  MB,
  memoryOf,
  ReceiptLog,
  spawnInstrumented,
  until,
} from './helpers.ts'

const TARGET_REQUESTS = LONG ? 50_000 : 10_000
const GROUP = 128
const REQUEST_DEADLINE_MS = 10_000
const WARM_UP_RUNS = 5
/** Stated bound: after a forced GC, the server's heap holds at most this much more than before the fuzz. */
const HEAP_GROWTH_BOUND = 32 * MB
/**
 * Stated bound: over the second half of the fuzz, resident memory grows by less than this. (It rises in
 * the first half as the allocator sizes itself for 128 concurrent bodies of up to 1 MB, then stays:
 * a leak would keep growing with the number of requests.) Alone it grows by 0–20 MB; when other tests
 * load the machine, requests pile up and it has grown by ~80 MB. A leak of 25 KB a request, over the
 * ~5,000 requests of the second half, would exceed it.
 */
const RSS_SECOND_HALF_BOUND = 128 * MB
/** Stated bound: the server's resident memory never exceeds this (VmHWM, the peak). */
const PEAK_RSS_BOUND = 512 * MB

const TRACKING_PATHS = [
  '/v1/batch',
  '/v1/import',
  '/v1/identify',
  '/v1/track',
  '/v1/page',
  '/v1/screen',
  '/v1/group',
  '/v1/alias',
] as const
const TYPES = ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const
type MessageType = (typeof TYPES)[number]
const PAGE_FIELDS = ['path', 'referrer', 'title', 'url']

/** Keys that reach for the prototype chain, mixed into generated objects. */
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf']
/** Members a polluted Object.prototype would most likely gain; checked to be absent afterwards. */
const POLLUTION_MARKERS = ['polluted', 'isAdmin', 'sharedSecret', 'userId', 'webhooks', 'All', 'Webhooks']

type Auth = 'writeKey' | 'writeKeyInBody' | 'admin' | 'none' | 'wrong' | 'writeKeyAsBearer'

interface RawSpec {
  kind: 'raw'
  label: string
  target: 'tracking' | 'manage'
  method: string
  path: string
  headers: Record<string, string>
  auth: Auth
  body?: Buffer
  /** Exact status the request must get, when the generator knows it. */
  status?: number
  /** The request must be refused (any 4xx). */
  refused?: boolean
  /** For a 200: whether its one message must be accepted (true) or rejected alone (false). */
  accepted?: boolean
}

interface Item {
  valid: boolean
  why: string
  message: unknown
}

interface MixedSpec {
  kind: 'mixed'
  label: string
  path: '/v1/batch' | '/v1/import'
  items: Item[]
  batchContext: Record<string, unknown> | undefined
  gzip: boolean
}

interface SingleSpec {
  kind: 'single'
  label: string
  type: MessageType
  item: Item
}

type Spec = RawSpec | MixedSpec | SingleSpec

// ------------------------------------------------------------------------------------------ set-up

const ADMIN_TOKEN = 'fuzz-admin-token-0123456789'
let sluice: InstrumentedSluice
let dataDir: string
let receiver: Receiver
const receipts = new ReceiptLog()
/** Delivered bodies of the mixed-batch messages, by messageId. */
const deliveredBodies = new Map<string, any>()
let fuzzSource: { id: string; writeKey: string }
let victimSource: { id: string; writeKey: string }
let victimDestinationId: string
let routes: Array<{ method: string; path: string }>

/** The management API of the child, with the admin token. */
async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(sluice.url + path, {
    method,
    headers: {
      authorization: `Bearer ${ADMIN_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: response.status, body: await response.json() }
}

before(async () => {
  receiver = await startReceiver((_req, res, body) => {
    const messageId = receipts.record(body)
    if (messageId?.startsWith('fz-')) deliveredBodies.set(messageId, JSON.parse(body.toString('utf8')))
    res.end('ok')
  })
  dataDir = await mkdtemp(join(tmpdir(), 'sluice-fuzz-'))
  // A real child process (a crash is an exit), with its own CPU: the fuzzer needs this one.
  sluice = await spawnInstrumented({
    SLUICE_DATA_DIR: dataDir,
    SLUICE_ADMIN_TOKEN: ADMIN_TOKEN,
    SLUICE_ALLOW_PRIVATE_DESTINATIONS: 'true', // the receiver is on 127.0.0.1
    // The fuzzer sends thousands of wrong tokens from one address; throttled, the management API
    // would answer them (and the admin's own requests) 429 within the first seconds.
    SLUICE_AUTH_FAILURES_PER_MINUTE: '0',
  })
  fuzzSource = (await api('POST', '/api/v1/sources', { name: 'Fuzzed source' })).body
  victimSource = (await api('POST', '/api/v1/sources', { name: 'Victim source (management fuzz)' })).body
  const fuzzDestination = await api('POST', '/api/v1/destinations', {
    name: 'Fuzz receiver',
    type: 'webhooks',
    sourceIds: [fuzzSource.id],
    settings: { webhooks: [{ url: `${receiver.url}/fuzz` }] },
  })
  assert.equal(fuzzDestination.status, 201)
  const victim = await api('POST', '/api/v1/destinations', {
    name: 'Victim destination (management fuzz)',
    type: 'webhooks',
    sourceIds: [],
    settings: { webhooks: [{ url: `${receiver.url}/victim` }], sharedSecret: 'victim-secret' },
  })
  assert.equal(victim.status, 201)
  victimDestinationId = victim.body.id
  const openapi = await api('GET', '/api/openapi.json')
  routes = Object.entries(openapi.body.paths as Record<string, Record<string, unknown>>)
    .filter(([path]) => path.startsWith('/api/v1/'))
    .flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => ({ method: method.toUpperCase(), path })),
    )
    // Signing in and out take no token (sign-in reads one from its body): they are not "real routes
    // that answer 401 without the admin token". The access tests cover them.
    .filter((route) => !(route.path === '/api/v1/session' && route.method !== 'GET'))
  assert.ok(routes.length >= 14, `only ${routes.length} management operations in the OpenAPI document`)
})

after(async () => {
  if (sluice && sluice.child.exitCode === null) sluice.child.kill('SIGKILL')
  await receiver?.close()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

// ------------------------------------------------------------------------------------ arbitraries

/** An object built from entries, so `__proto__` keys become own members, exactly as JSON.parse makes them. */
const objectFrom = (entries: Array<[string, unknown]>): Record<string, unknown> => Object.fromEntries(entries)

const keyArb = fc.oneof(
  { arbitrary: fc.string({ maxLength: 12 }), weight: 6 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 6 }), weight: 1 },
  { arbitrary: fc.constantFrom(...PROTO_KEYS), weight: 2 },
)
const leafArb = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 10 }), // lone surrogates included
  fc.string({ unit: 'grapheme', maxLength: 10 }), // emoji, combining marks
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
)
const jsonObjectArb: fc.Arbitrary<Record<string, unknown>> = fc.letrec<{
  obj: Record<string, unknown>
  value: unknown
}>((tie) => ({
  obj: fc.array(fc.tuple(keyArb, tie('value')), { maxLength: 5 }).map(objectFrom),
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafArb,
    tie('obj'),
    fc.array(tie('value'), { maxLength: 3 }),
  ),
})).obj

const idArb = fc.oneof(
  fc.string({ minLength: 1, maxLength: 30 }).filter((s) => s.trim() !== ''),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }).filter((s) => s.trim() !== ''),
  fc.integer(),
)
const isoArb = fc
  .date({ min: new Date('1000-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true })
  .map((date) => date.toISOString())

/** A message valid for `type` under every Tracking API rule (no messageId: assigned when sent). */
function validMessageArb(type: MessageType): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .record(
      {
        userId: idArb,
        anonymousId: idArb,
        event: fc.string({ minLength: 1, maxLength: 30 }).filter((s) => s.trim() !== ''),
        groupId: idArb,
        previousId: idArb,
        properties: jsonObjectArb,
        traits: jsonObjectArb,
        context: jsonObjectArb,
        name: fc.string({ maxLength: 20 }),
        timestamp: fc.oneof(isoArb, fc.integer({ min: 0, max: 4_102_444_800_000 })),
        sentAt: isoArb,
        anonymousOnly: fc.boolean(),
      },
      { requiredKeys: ['userId', 'anonymousId', 'anonymousOnly'] },
    )
    .map(({ anonymousOnly, ...fields }) => {
      const message: Record<string, unknown> = { type }
      if (anonymousOnly && type !== 'alias') message.anonymousId = fields.anonymousId
      else message.userId = fields.userId
      if (type === 'track') message.event = fields.event ?? 'Fuzzed Event'
      if (type === 'group') message.groupId = fields.groupId ?? 'group-1'
      if (type === 'alias') message.previousId = fields.previousId ?? 'previous-1'
      if (fields.properties && type !== 'identify' && type !== 'group') message.properties = fields.properties
      if (fields.traits && (type === 'identify' || type === 'group')) message.traits = fields.traits
      if (fields.context) message.context = fields.context
      if (fields.name !== undefined && (type === 'page' || type === 'screen')) message.name = fields.name
      if (fields.timestamp !== undefined) message.timestamp = fields.timestamp
      if (fields.sentAt !== undefined) message.sentAt = fields.sentAt
      return message
    })
}

/** Nests `depth` objects (or arrays) inside each other around `1`: depth 0 is just `1`. */
function nested(depth: number, style: 'object' | 'array'): unknown {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = style === 'object' ? { a: value } : [value]
  return value
}

/** The same as text, for depths JSON.stringify could not serialize. */
function nestedText(depth: number, style: 'object' | 'array'): string {
  return style === 'object'
    ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
    : `${'['.repeat(depth)}1${']'.repeat(depth)}`
}

const MUTATIONS = [
  'no user id',
  'user id of the wrong type',
  'event missing',
  'event blank',
  'group without groupId',
  'alias without previousId',
  'properties not an object',
  'context not an object',
  'name not a string',
  'messageId empty',
  'messageId too long',
  'messageId not a string',
  'timestamp unreadable',
  'timestamp out of range',
  'sentAt unreadable',
  'too big',
  'too deep',
] as const

/** A valid message with one rule broken, so it must be rejected, alone. */
function invalidMessageArb(type: MessageType, canBreakType: boolean): fc.Arbitrary<Item> {
  const typeBreaks = canBreakType
    ? [
        fc.constant<[string, unknown]>(['type missing', undefined]),
        fc.constantFrom<[string, unknown]>(
          ['type wrong', 'Track'],
          ['type wrong', 'delete'],
          ['type wrong', 42],
          ['type wrong', ['track']],
          ['type wrong', null],
        ),
      ]
    : []
  return fc
    .tuple(
      validMessageArb(type),
      fc.oneof(
        fc.constantFrom(...MUTATIONS).map((m): [string, unknown] => [m, undefined]),
        ...typeBreaks,
      ),
      fc.integer({ min: MAX_NESTING_DEPTH + 1, max: MAX_NESTING_DEPTH + 200 }),
    )
    .map(([message, [why, value], depth]): Item => {
      const m: Record<string, unknown> = { ...message }
      switch (why) {
        case 'type missing':
          delete m.type
          break
        case 'type wrong':
          m.type = value
          break
        case 'no user id':
          delete m.userId
          delete m.anonymousId
          break
        case 'user id of the wrong type':
          m.userId = { id: 1 }
          break
        case 'event missing':
          if (type !== 'track')
            return { valid: false, why: 'no user id', message: { ...m, userId: undefined, anonymousId: '' } }
          delete m.event
          break
        case 'event blank':
          m.event = type === 'track' ? '   ' : 5
          break
        case 'group without groupId':
          if (type !== 'group')
            return { valid: false, why: 'messageId empty', message: { ...m, messageId: '' } }
          delete m.groupId
          break
        case 'alias without previousId':
          if (type !== 'alias')
            return { valid: false, why: 'properties not an object', message: { ...m, properties: 'x' } }
          m.previousId = ''
          break
        case 'properties not an object':
          m.properties = ['not', 'an', 'object']
          break
        case 'context not an object':
          m.context = 'mobile'
          break
        case 'name not a string':
          m.name = { first: 'x' }
          break
        case 'messageId empty':
          m.messageId = ''
          break
        case 'messageId too long':
          m.messageId = 'm'.repeat(257)
          break
        case 'messageId not a string':
          m.messageId = 12345
          break
        case 'timestamp unreadable':
          m.timestamp = '2026-13-45T99:99:99Z'
          break
        case 'timestamp out of range':
          m.timestamp = 1e20
          break
        case 'sentAt unreadable':
          m.sentAt = 'yesterday'
          break
        case 'too big':
          m.context = { pad: 'x'.repeat(33 * 1024) }
          break
        case 'too deep':
          m.context = { deep: nested(depth, depth % 2 === 0 ? 'object' : 'array') }
          break
      }
      return { valid: false, why, message: m }
    })
}

const nonObjectItemArb = fc
  .constantFrom<unknown>(null, 5, 'track', true, [], [{ type: 'track', userId: 'u', event: 'E' }])
  .map((message): Item => ({ valid: false, why: 'not an object', message }))

const mixedArb: fc.Arbitrary<MixedSpec> = fc
  .record({
    path: fc.constantFrom('/v1/batch' as const, '/v1/import' as const),
    items: fc.array(
      fc.constantFrom(...TYPES).chain((type) =>
        fc.oneof(
          {
            arbitrary: validMessageArb(type).map((message): Item => ({ valid: true, why: 'valid', message })),
            weight: 3,
          },
          { arbitrary: invalidMessageArb(type, true), weight: 2 },
          { arbitrary: nonObjectItemArb, weight: 1 },
        ),
      ),
      { minLength: 1, maxLength: 20 },
    ),
    batchContext: fc.option(jsonObjectArb, { nil: undefined }),
    gzip: fc.boolean(),
  })
  .map((spec) => ({ kind: 'mixed' as const, label: 'mixed batch', ...spec }))

const singleArb: fc.Arbitrary<SingleSpec> = fc.constantFrom(...TYPES).chain((type) =>
  fc
    .oneof(
      validMessageArb(type).map((message): Item => ({ valid: true, why: 'valid', message })),
      invalidMessageArb(type, false),
    )
    .map((item) => ({ kind: 'single' as const, label: `single ${type}`, type, item })),
)

// Raw bodies ------------------------------------------------------------------------------------

const trackingPathArb = fc.constantFrom(...TRACKING_PATHS)
const trackingAuthArb = fc.constantFrom<Auth>(
  'writeKey',
  'writeKey',
  'writeKey',
  'writeKeyInBody',
  'none',
  'wrong',
)
const contentTypeArb = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=iso-8859-1',
  'application/json; charset=utf-16',
  'multipart/form-data; boundary=x',
  '',
)
const encodingArb = fc.constantFrom(
  undefined,
  'gzip',
  'deflate',
  'br',
  'identity',
  'GZIP',
  'x-gzip',
  'gzip, deflate',
  'zstd',
  ' gzip ',
)

function tracking(label: string, path: string, body: Buffer, extra: Partial<RawSpec> = {}): RawSpec {
  return {
    kind: 'raw',
    label,
    target: 'tracking',
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json' },
    auth: 'writeKey',
    body,
    ...extra,
  }
}

const validBatchText = (items: unknown[]) => JSON.stringify({ batch: items })
const smallBatchArb = fc
  .array(validMessageArb('track'), { minLength: 1, maxLength: 5 })
  .map((items) => Buffer.from(validBatchText(items)))

const randomBytesArb = fc
  .record({
    path: trackingPathArb,
    bytes: fc.uint8Array({ maxLength: 4096 }),
    encoding: encodingArb,
    type: contentTypeArb,
    auth: trackingAuthArb,
  })
  .map(({ path, bytes, encoding, type, auth }) =>
    tracking('random bytes', path, Buffer.from(bytes), {
      headers: {
        ...(type ? { 'content-type': type } : {}),
        ...(encoding === undefined ? {} : { 'content-encoding': encoding }),
      },
      auth,
    }),
  )

const randomJsonArb = fc
  .record({
    path: trackingPathArb,
    value: fc.jsonValue({ maxDepth: 6 }),
    auth: trackingAuthArb,
    gzip: fc.boolean(),
  })
  .map(({ path, value, auth, gzip }) => {
    const text = Buffer.from(JSON.stringify(value) ?? 'null')
    return tracking('random JSON', path, gzip ? gzipSync(text) : text, {
      auth,
      headers: { 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
    })
  })

const brokenJsonArb = fc
  .record({
    body: smallBatchArb,
    at: fc.nat(),
    how: fc.constantFrom('truncate', 'insert', 'delete', 'duplicate'),
    junk: fc.string({ minLength: 1, maxLength: 3 }),
  })
  .map(({ body, at, how, junk }) => {
    const text = body.toString('utf8')
    const i = at % text.length
    const broken =
      how === 'truncate'
        ? text.slice(0, i)
        : how === 'insert'
          ? text.slice(0, i) + junk + text.slice(i)
          : how === 'delete'
            ? text.slice(0, i) + text.slice(i + 1)
            : text.slice(0, i) + text.slice(i / 2)
    return tracking(`broken JSON (${how})`, '/v1/batch', Buffer.from(broken))
  })

const badCompressionArb = fc
  .record({
    body: smallBatchArb,
    at: fc.nat(),
    how: fc.constantFrom(
      'truncated',
      'flipped byte',
      'junk appended',
      'junk prepended',
      'deflate labelled gzip',
      'gzip labelled deflate',
      'gzipped twice',
      'empty gzip',
      'random after header',
    ),
    junk: fc.uint8Array({ minLength: 1, maxLength: 64 }),
  })
  .map(({ body, at, how, junk }) => {
    const gz = gzipSync(body)
    const i = 10 + (at % Math.max(1, gz.length - 18)) // inside the deflate stream, past the header
    let wire: Buffer
    let encoding = 'gzip'
    switch (how) {
      case 'truncated':
        wire = gz.subarray(0, i)
        break
      case 'flipped byte':
        wire = Buffer.from(gz)
        wire[i] = wire[i]! ^ 0xff
        break
      case 'junk appended':
        wire = Buffer.concat([gz, Buffer.from(junk)])
        break
      case 'junk prepended':
        wire = Buffer.concat([Buffer.from(junk), gz])
        break
      case 'deflate labelled gzip':
        wire = deflateSync(body)
        break
      case 'gzip labelled deflate':
        wire = gz
        encoding = 'deflate'
        break
      case 'gzipped twice':
        wire = gzipSync(gz)
        break
      case 'empty gzip':
        wire = gzipSync(Buffer.alloc(0))
        break
      default:
        wire = Buffer.concat([gz.subarray(0, 10), Buffer.from(junk)])
    }
    return tracking(`bad compression (${how})`, '/v1/batch', wire, {
      headers: { 'content-type': 'application/json', 'content-encoding': encoding },
    })
  })

/** Bytes that are not UTF-8, inside a string of an otherwise valid call. */
const foreignBytesArb = fc.oneof(
  fc.string({ minLength: 1, maxLength: 10 }).map((s) => Buffer.from(`é${s}ü`, 'latin1')),
  fc.constantFrom(
    Buffer.from([0xc3, 0x28]), // invalid 2-byte sequence
    Buffer.from([0xa0, 0xa1]), // continuation bytes without a lead
    Buffer.from([0xe2, 0x28, 0xa1]),
    Buffer.from([0xc0, 0xaf]), // overlong "/"
    Buffer.from([0xed, 0xa0, 0x80]), // an encoded surrogate
    Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]), // 5-byte form
    Buffer.from([0xff, 0xfe, 0xfd]),
  ),
  fc.uint8Array({ minLength: 1, maxLength: 16 }).map((bytes) => Buffer.from(bytes.map((b) => b | 0x80))),
)
const wrongCharsetArb = fc
  .record({
    bytes: foreignBytesArb,
    whole: fc.constantFrom(
      'in a string',
      'utf-16le',
      'utf-16le with BOM',
      'utf-16be',
      'utf-8 BOM',
      'latin1 body',
    ),
    type: contentTypeArb,
  })
  .map(({ bytes, whole, type }) => {
    const text = '{"userId":"charset-user","event":"Zürich café 🎉"}'
    let body: Buffer
    switch (whole) {
      case 'in a string':
        body = Buffer.concat([Buffer.from('{"userId":"charset-user","event":"'), bytes, Buffer.from('"}')])
        break
      case 'utf-16le':
        body = Buffer.from(text, 'utf16le')
        break
      case 'utf-16le with BOM':
        body = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])
        break
      case 'utf-16be':
        body = Buffer.from(text, 'utf16le').swap16()
        break
      case 'utf-8 BOM':
        body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])
        break
      default:
        body = Buffer.from(text, 'latin1')
    }
    return tracking(`wrong charset (${whole})`, '/v1/track', body, {
      headers: type ? { 'content-type': type } : {},
    })
  })

/**
 * Deep nesting with the exact answer expected: a message may nest MAX_NESTING_DEPTH levels, a batch's
 * context one less (it is merged one level down); the whole body may be any depth JSON.parse takes.
 */
const deepArb = fc
  .record({
    depth: fc.oneof(
      fc.integer({ min: MAX_NESTING_DEPTH - 4, max: MAX_NESTING_DEPTH + 2 }),
      fc.integer({ min: 1, max: 300 }),
      fc.constantFrom(1_000, 5_000, 20_000, 100_000),
    ),
    style: fc.constantFrom<'object' | 'array'>('object', 'array'),
    where: fc.constantFrom('properties', 'batch context', 'batch integrations', 'batch item', 'whole body'),
  })
  .map(({ depth, style, where }) => {
    const inner = nestedText(depth, style)
    // Bodies over 500 KB are refused whole (413) before their depth matters.
    const sized = (body: string, status: number, accepted?: boolean): Partial<RawSpec> =>
      Buffer.byteLength(body) > 512_000
        ? { status: 413 }
        : { status, ...(accepted === undefined ? {} : { accepted }) }
    let path = '/v1/batch'
    let body: string
    let expected: Partial<RawSpec>
    switch (where) {
      case 'properties':
        // message (1) > properties (2) > p (3..): the message nests 2 + depth levels; rejected alone past the limit.
        path = '/v1/track'
        body = `{"userId":"deep","event":"Deep","properties":{"p":${inner}}}`
        expected = sized(body, 200, 2 + depth <= MAX_NESTING_DEPTH)
        break
      case 'batch context':
      case 'batch integrations':
        // The member nests 1 + depth levels; merged one level down, it may nest MAX_NESTING_DEPTH - 1.
        body = `{"batch":[{"type":"track","userId":"deep","event":"Deep"}],"${where.slice(6)}":{"c":${inner}}}`
        expected = sized(body, 1 + depth <= MAX_NESTING_DEPTH - 1 ? 200 : 400)
        break
      case 'batch item':
        body = `{"batch":[${inner}]}` // an item that is not a message: rejected alone
        expected = sized(body, 200)
        break
      default:
        body = inner // not an object with a batch array
        expected = sized(body, 400)
    }
    return tracking(`deep ${where}`, path, Buffer.from(body), expected)
  })

/** Built once: big bodies are costly to generate and the fuzzer needs only a few shapes of them. */
const BIG = (() => {
  /** A valid batch body of exactly `bytes` bytes, padded in its context. */
  const pad = (bytes: number) => {
    const shell = (padding: string) =>
      `{"batch":[{"type":"track","userId":"u","event":"E"}],"context":{"pad":"${padding}"}}`
    return shell('p'.repeat(bytes - shell('').length))
  }
  const overLimit = Buffer.from(pad(512_001))
  assert.equal(overLimit.length, 512_001)
  const tiny = JSON.stringify({ type: 'track', userId: 'u', event: 'E' })
  return {
    'just over 500 KB': { body: overLimit, encoding: undefined, status: 413 },
    '1.2 MB': { body: Buffer.from(pad(1_200_000)), encoding: undefined, status: 413 },
    'gzip bomb (10 MB of spaces)': {
      body: gzipSync(Buffer.alloc(10 * MB, 0x20)),
      encoding: 'gzip',
      status: 413,
    },
    'deflate over 500 KB inflated': { body: deflateSync(overLimit), encoding: 'deflate', status: 413 },
    '2,501 items': {
      body: Buffer.from(`{"batch":[${Array.from({ length: 2501 }, () => tiny).join(',')}]}`),
      encoding: undefined,
      status: 400,
    },
  } as const
})()
const oversizedArb = fc.constantFrom(...(Object.keys(BIG) as Array<keyof typeof BIG>)).map((name) => {
  const { body, encoding, status } = BIG[name]
  return tracking(`oversized (${name})`, '/v1/batch', body, {
    status,
    headers: { 'content-type': 'application/json', ...(encoding ? { 'content-encoding': encoding } : {}) },
  })
})

/** Prototype-polluting members, written as JSON text (an object literal would set the prototype instead). */
const POLLUTING_MEMBERS = [
  '"__proto__":{"polluted":"yes","isAdmin":true,"userId":"polluter","sharedSecret":"polluted"}',
  '"constructor":{"prototype":{"polluted":"yes","All":false,"webhooks":[]}}',
  '"prototype":{"polluted":"yes"}',
  '"__proto__":null',
  '"__proto__":[1,2]',
  '"__proto__":{"__proto__":{"polluted":"deep"}}',
]
const protoArb = fc
  .record({
    member: fc.constantFrom(...POLLUTING_MEMBERS),
    where: fc.constantFrom(
      'message',
      'properties',
      'context',
      'traits',
      'integrations',
      'batch',
      'batch context',
      'batch integrations',
    ),
  })
  .map(({ member, where }) => {
    const message = (extra: string) =>
      `{"type":"track","userId":"proto","event":"Proto"${extra ? `,${extra.slice(0, -1)}` : ''}}`
    switch (where) {
      case 'message':
        return tracking(
          `prototype keys (${where})`,
          '/v1/batch',
          Buffer.from(`{"batch":[${message(`${member},`)}]}`),
          { status: 200 },
        )
      case 'batch':
        return tracking(
          `prototype keys (${where})`,
          '/v1/batch',
          Buffer.from(`{${member},"batch":[${message('')}]}`),
          { status: 200 },
        )
      case 'batch context':
      case 'batch integrations': {
        const key = where === 'batch context' ? 'context' : 'integrations'
        return tracking(
          `prototype keys (${where})`,
          '/v1/batch',
          Buffer.from(`{"${key}":{${member}},"batch":[${message('')}]}`),
          { status: 200 },
        )
      }
      default:
        return tracking(
          `prototype keys (${where})`,
          '/v1/batch',
          Buffer.from(`{"batch":[${message(`"${where}":{${member}},`)}]}`),
          { status: 200 },
        )
    }
  })

// Management API ---------------------------------------------------------------------------------

const SAFE_URL_PREFIXES = () => [`http://127.0.0.1:${receiver.port}/`, `https://127.0.0.1:${receiver.port}/`]

/** Webhook URLs: only ever 127.0.0.1 (the fuzz receiver), or strings that are not valid webhook URLs. */
const urlArb = fc.oneof(
  fc
    .string({ maxLength: 20 })
    .map((path) => `http://127.0.0.1:${receiver.port}/m/${encodeURIComponent(path)}`),
  fc.constant(null).map(() => `https://127.0.0.1:${receiver.port}/tls`),
  fc.constantFrom(
    'ftp://files.invalid/x',
    'javascript:alert(1)',
    '/relative/path',
    'http//missing-colon',
    'https:no-slashes.invalid',
    'http://user:pass@127.0.0.1/hook',
    '',
    '   ',
    'file:///etc/passwd',
    'gopher://127.0.0.1:70/x',
    `http://127.0.0.1:${'9'.repeat(10)}/`,
    'x'.repeat(3000),
  ),
  fc.string({ maxLength: 30 }).filter((s) => !/http/i.test(s)),
  fc.integer(),
  fc.constant(null),
)
const headerNameArb = fc.oneof(
  fc.constantFrom('X-Team', 'Authorization', 'x-api-key', "X-!#$%&'*+-.^_`|~09"),
  fc.constantFrom(
    'User-Agent',
    'content-type',
    'X-SIGNATURE',
    'Host',
    'content-length',
    'Connection',
    'Transfer-Encoding',
    'TE',
    'Upgrade',
    'Keep-Alive',
  ),
  fc.constantFrom('X Bad', 'X-Bad:', 'X-\r\nInjected', 'Ünïcode', '', '__proto__', 'constructor'),
  fc.string({ maxLength: 10 }),
)
const headerValueArb = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom('a\r\nX-Injected: 1', 'a\nb', 'a\rb', 'nul\u0000', 'café', 'x'.repeat(5000), ' padded '),
  fc.integer(),
  fc.constant(null),
)
const headersArb = fc.oneof(
  fc.array(fc.tuple(headerNameArb, headerValueArb), { maxLength: 4 }).map(objectFrom),
  fc.constantFrom<unknown>('X-Team: a', ['X-Team'], null),
)
const settingsArb = fc
  .record(
    {
      webhooks: fc.oneof(
        fc.array(fc.record({ url: urlArb, headers: headersArb }, { requiredKeys: ['url'] }), {
          maxLength: 7,
        }),
        fc.jsonValue({ maxDepth: 2 }),
      ),
      sharedSecret: fc.oneof(
        fc.string({ maxLength: 40 }),
        fc.constant(null),
        fc.constant('s'.repeat(1025)),
        fc.integer(),
      ),
      extra: fc.jsonValue({ maxDepth: 1 }),
    },
    { requiredKeys: [] },
  )
  .map(({ extra, ...settings }) =>
    extra === undefined ? settings : { ...settings, [typeof extra === 'string' ? extra : 'extra']: extra },
  )

const nameArb = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', '   ', 'x'.repeat(200), 'x'.repeat(201), '\u0000\u0001', '__proto__'),
  fc.integer(),
  fc.constant(null),
)

function sourceIdsArb(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.subarray([victimSource.id, 'src_000000000000000000000000', 'src_nope']),
    fc.constantFrom<unknown>([victimSource.id, victimSource.id], 'src_x', [1, 2], null),
  )
}

/**
 * Ids for a path parameter: the victim's (real), unknown ones, and hostile strings. Malformed
 * percent-encoding and parameters over 100 characters are left to the 'errors raised before routing'
 * test: Fastify answers them before any Sluice code runs.
 */
function pathIdArb(path: string): fc.Arbitrary<string> {
  const real = path.includes('/sources/')
    ? [victimSource.id]
    : path.includes('/deliveries/{id}')
      ? ['1', '2', '3']
      : [victimDestinationId]
  return fc.oneof(
    fc.constantFrom(...real),
    fc.constantFrom(
      'src_000000000000000000000000',
      'dst_000000000000000000000000',
      '0',
      '-1',
      '1.5',
      '99999999999999999999',
      '1e3',
      '0x10',
    ),
    fc.constantFrom(
      '..',
      '%2e%2e',
      '%00',
      '..%2F..%2Fetc%2Fpasswd',
      'a%20b',
      '%E2%80%AE',
      '__proto__',
      'constructor',
    ),
    fc.string({ maxLength: 20 }).map(encodeURIComponent),
    fc.string({ unit: 'grapheme', maxLength: 8 }).map(encodeURIComponent),
    fc.constant('x'.repeat(100)), // Fastify's longest path parameter; longer ones: see 'errors raised before routing'
  )
}

const queryArb = fc.oneof(
  fc.constant(''),
  fc.constantFrom(
    '?status=failed',
    '?status=FAILED',
    '?status=failed&status=delivered',
    '?limit=0',
    '?limit=501',
    '?limit=-1',
    '?limit=abc',
    '?limit=1e309',
    '?before=0',
    '?before=99999999999999999999999',
    '?since=yesterday',
    '?since=2026-01-31',
    '?since=2026-01-31T12:00:00%2B01:00',
    '?stauts=failed',
    '?__proto__[polluted]=yes',
    '?constructor[prototype][polluted]=yes',
    '?a=%zz',
  ),
  fc
    .array(fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })), { maxLength: 3 })
    .map(
      (pairs) => `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`,
    ),
)

const manageBodyArb = (
  path: string,
): fc.Arbitrary<{ label: string; body: Buffer | undefined; type: string | undefined }> => {
  const json = (label: string, value: fc.Arbitrary<unknown>) =>
    value.map((v) => ({
      label,
      body: Buffer.from(JSON.stringify(v) ?? 'null'),
      type: 'application/json' as string | undefined,
    }))
  const structured = path.startsWith('/api/v1/destinations')
    ? fc.record(
        {
          name: nameArb,
          type: fc.constantFrom<unknown>('webhooks', 'Webhooks', 'segment', 1),
          enabled: fc.oneof(fc.boolean(), fc.constantFrom<unknown>(0, 'false', null)),
          sourceIds: sourceIdsArb(),
          settings: settingsArb,
        },
        { requiredKeys: [] },
      )
    : fc.record(
        {
          name: nameArb,
          enabled: fc.oneof(fc.boolean(), fc.constantFrom<unknown>(0, 'yes')),
          rotateWriteKey: fc.oneof(fc.boolean(), fc.constant<unknown>('true')),
        },
        { requiredKeys: [] },
      )
  return fc.oneof(
    { arbitrary: json('structured body', structured), weight: 6 },
    { arbitrary: json('random JSON body', fc.jsonValue({ maxDepth: 4 })), weight: 2 },
    {
      arbitrary: fc.uint8Array({ maxLength: 512 }).map((b) => ({
        label: 'random bytes body',
        body: Buffer.from(b),
        type: 'application/json' as string | undefined,
      })),
      weight: 1,
    },
    {
      arbitrary: fc.constantFrom(...POLLUTING_MEMBERS).map((member) => ({
        label: 'prototype keys body',
        body: Buffer.from(`{"name":"p",${member}}`),
        type: 'application/json' as string | undefined,
      })),
      weight: 1,
    },
    {
      arbitrary: fc.constantFrom(1_000, 10_000, 100_000).map((depth) => ({
        label: 'deep body',
        body: Buffer.from(`{"name":${nestedText(depth, 'array')}}`),
        type: 'application/json' as string | undefined,
      })),
      weight: 1,
    },
    {
      arbitrary: fc
        .tuple(
          fc.constantFrom(
            'text/plain',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            'application/json; charset=utf-16',
            '',
            'application/json',
          ),
          fc.constantFrom('{"name":"x"}', 'name=x', '', '{'),
        )
        .map(([type, text]) => ({
          label: 'other content type',
          body: Buffer.from(text),
          type: type || undefined,
        })),
      weight: 1,
    },
    { arbitrary: fc.constant({ label: 'no body', body: undefined, type: undefined }), weight: 2 },
  )
}

const manageArb: fc.Arbitrary<RawSpec> = fc.constant(null).chain(() =>
  fc
    .record({
      route: fc.oneof(
        { arbitrary: fc.constantFrom(...routes).map((r) => ({ ...r, known: true })), weight: 9 },
        {
          arbitrary: fc.record({
            method: fc.constantFrom('GET', 'PUT', 'POST', 'OPTIONS', 'DELETE'),
            path: fc.constantFrom('/api/v1', '/api/v1/', '/api/v1/nope', '/api/v1/sources/{id}/nope', '/api'),
            known: fc.constant(false),
          }),
          weight: 1,
        },
      ),
      wrongMethod: fc.oneof(
        { arbitrary: fc.constant(undefined), weight: 9 },
        { arbitrary: fc.constantFrom('PUT', 'OPTIONS', 'GET', 'POST', 'PATCH', 'DELETE'), weight: 1 },
      ),
      auth: fc.constantFrom<Auth>(
        'admin',
        'admin',
        'admin',
        'admin',
        'admin',
        'admin',
        'none',
        'wrong',
        'writeKeyAsBearer',
        'writeKey',
      ),
    })
    .chain(({ route, wrongMethod, auth }) =>
      fc
        .record({ id: pathIdArb(route.path), query: queryArb, body: manageBodyArb(route.path) })
        .map(({ id, query, body }) => {
          const method = wrongMethod ?? route.method
          const path = route.path.replace('{id}', id) + query
          const safe = safeManagementBody(path, body.body)
          const knownRoute = route.known && (wrongMethod === undefined || wrongMethod === route.method)
          // Signing in and out take no token, whatever the fuzzer's method change lands on them.
          const tokenFree =
            path.split('?')[0] === '/api/v1/session' && (method === 'POST' || method === 'DELETE')
          return {
            kind: 'raw' as const,
            label: `management ${body.label}`,
            target: 'manage' as const,
            method,
            path,
            headers: (body.type === undefined || safe === undefined
              ? {}
              : { 'content-type': body.type }) as Record<string, string>,
            auth,
            ...(safe === undefined ? {} : { body: safe }),
            // Without the admin token, a real route is a 401 whatever else is wrong with the request.
            ...(auth !== 'admin' && knownRoute ? { status: 401 } : {}),
            ...(auth !== 'admin' && !tokenFree ? { refused: true } : {}),
            ...(auth === 'admin' && writesSettings(method, path) && mustRefuseHeaders(safe)
              ? { refused: true }
              : {}),
          }
        }),
    ),
)

/** Bodies over Fastify's 1 MB transport limit, to real routes. */
const manageOversizedArb: fc.Arbitrary<RawSpec> = fc.constant(null).chain(() =>
  fc.constantFrom(...routes.filter((r) => r.method === 'POST' || r.method === 'PATCH')).map((route) => ({
    kind: 'raw' as const,
    label: 'management body over 1 MB',
    target: 'manage' as const,
    method: route.method,
    path: route.path.replace('{id}', 'src_000000000000000000000000'),
    headers: { 'content-type': 'application/json' },
    auth: 'admin' as const,
    body: BIG['1.2 MB'].body,
    status: 413,
  })),
)

/**
 * Never let a fuzzed request point a destination anywhere but 127.0.0.1: a body to a destination route
 * holding any http(s) URL other than the fuzz receiver's is replaced with `{}`. (The URL generator only
 * makes such URLs; this also catches one a random string might spell.) `/test` only ever reaches the
 * victim destination, whose URLs obey the same rule.
 */
function safeManagementBody(path: string, body: Buffer | undefined): Buffer | undefined {
  if (body === undefined || !path.includes('/destinations') || !/http/i.test(body.toString('latin1')))
    return body
  let value: unknown
  try {
    value = JSON.parse(body.toString('utf8').replace(/^\uFEFF/, ''))
  } catch {
    return body // not JSON: cannot configure anything
  }
  const stack = [value]
  while (stack.length > 0) {
    const node = stack.pop()
    if (typeof node === 'string') {
      const text = node.trim()
      if (/^https?:/i.test(text) && !SAFE_URL_PREFIXES().some((prefix) => text.startsWith(prefix))) {
        return Buffer.from('{}')
      }
    } else if (node !== null && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) stack.push(key, child)
    }
  }
  return body
}

/** The requests that store destination settings: create, and update by id. */
function writesSettings(method: string, path: string): boolean {
  return (
    (method === 'POST' && /^\/api\/v1\/destinations(\?|$)/.test(path)) ||
    (method === 'PATCH' && /^\/api\/v1\/destinations\/[^/?]+(\?|$)/.test(path))
  )
}

/** Static headers with CR/LF in a name or value, or a reserved name, must never be accepted. */
function mustRefuseHeaders(body: Buffer | undefined): boolean {
  if (body === undefined) return false
  let value: any
  try {
    value = JSON.parse(body.toString('utf8'))
  } catch {
    return false
  }
  const webhooks = value?.settings?.webhooks
  if (!Array.isArray(webhooks)) return false
  const reserved = new Set(RESERVED_HEADER_NAMES.map((name) => name.toLowerCase()))
  return webhooks.some((webhook: any) => {
    const headers = webhook?.headers
    if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) return false
    return Object.entries(headers).some(
      ([name, v]) =>
        reserved.has(name.toLowerCase()) ||
        /[\r\n]/.test(name) ||
        (typeof v === 'string' && /[\r\n]/.test(v)),
    )
  })
}

/** Moves the write key into the body (`{"writeKey": ..., ...}`) when the body is a JSON object. */
function withWriteKeyInBody(body: Buffer | undefined): Buffer | undefined {
  if (body === undefined || body[0] !== 0x7b /* { */) return body
  const member = `"writeKey":${JSON.stringify(fuzzSource.writeKey)}`
  const rest = body.subarray(1)
  return Buffer.concat([Buffer.from(`{${member}${rest[0] === 0x7d /* } */ ? '' : ','}`), rest])
}

// -------------------------------------------------------------------------------------- sending

interface Tally {
  requests: number
  byLabel: Map<string, number>
  byStatus: Map<number, number>
  /** messageId -> the message as sent, for every valid message of a mixed batch or single call. */
  validSent: Map<string, Record<string, unknown>>
  maxLatencyMs: number
}

const tally: Tally = {
  requests: 0,
  byLabel: new Map(),
  byStatus: new Map(),
  validSent: new Map(),
  maxLatencyMs: 0,
}
let sequence = 0

function authHeader(auth: Auth): Record<string, string> {
  const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`
  switch (auth) {
    case 'writeKey':
      return { authorization: basic(fuzzSource.writeKey) }
    case 'admin':
      return { authorization: `Bearer ${ADMIN_TOKEN}` }
    case 'wrong':
      return { authorization: Math.random() < 0.5 ? 'Bearer not-the-token' : basic('not-a-write-key') }
    case 'writeKeyAsBearer':
      return { authorization: `Bearer ${fuzzSource.writeKey}` }
    default:
      return {}
  }
}

async function request(
  pool: Pool,
  spec: { method: string; path: string; headers: Record<string, string>; body?: Buffer | undefined },
  label: string,
): Promise<{ status: number; contentType: string | string[] | undefined; text: string }> {
  const started = performance.now()
  try {
    const response = await pool.request({
      method: spec.method as 'GET',
      path: spec.path,
      headers: spec.headers,
      body: spec.body ?? null,
      headersTimeout: REQUEST_DEADLINE_MS,
      bodyTimeout: REQUEST_DEADLINE_MS,
    })
    // A live debugger stream never ends by itself (heartbeats keep it open): its answer is its head.
    const streaming = String(response.headers['content-type'] ?? '').startsWith('text/event-stream')
    if (streaming) response.body.destroy()
    const text = streaming ? '' : await response.body.text()
    tally.requests++
    tally.byLabel.set(label, (tally.byLabel.get(label) ?? 0) + 1)
    tally.byStatus.set(response.statusCode, (tally.byStatus.get(response.statusCode) ?? 0) + 1)
    tally.maxLatencyMs = Math.max(tally.maxLatencyMs, performance.now() - started)
    return { status: response.statusCode, contentType: response.headers['content-type'], text }
  } catch (error) {
    const code = (error as { code?: string }).code ?? ''
    if (/TIMEOUT/.test(code))
      assert.fail(
        `${label}: no answer within ${REQUEST_DEADLINE_MS} ms (a hang): ${spec.method} ${spec.path.slice(0, 200)}`,
      )
    throw error
  }
}

/** Checks what every answer must be: not a 5xx, and an error is the documented JSON. */
function checkAnswer(
  label: string,
  answer: { status: number; contentType: string | string[] | undefined; text: string },
) {
  assert.ok(answer.status < 500, `${label}: ${answer.status} ${answer.text.slice(0, 500)}`)
  if (answer.status >= 400) assertJsonError(answer.status, answer.contentType, answer.text, label)
}

async function sendSpec(pool: Pool, spec: Spec): Promise<void> {
  if (spec.kind === 'raw') {
    const headers = { ...spec.headers, ...authHeader(spec.auth) }
    const body = spec.auth === 'writeKeyInBody' ? withWriteKeyInBody(spec.body) : spec.body
    const answer = await request(pool, { method: spec.method, path: spec.path, headers, body }, spec.label)
    checkAnswer(spec.label, answer)
    if (spec.status !== undefined) {
      assert.equal(
        answer.status,
        spec.status,
        `${spec.label}: ${spec.method} ${spec.path.slice(0, 120)} -> ${answer.text.slice(0, 300)}`,
      )
    }
    if (spec.refused) {
      assert.ok(
        answer.status >= 400,
        `${spec.label}: must be refused (${spec.auth}): ${spec.method} ${spec.path.slice(0, 120)} ${spec.body?.toString('utf8').slice(0, 300)}`,
      )
    }
    if (spec.accepted !== undefined) {
      const result = JSON.parse(answer.text)
      assert.equal(
        result.rejected === undefined,
        spec.accepted,
        `${spec.label}: ${answer.text.slice(0, 300)}`,
      )
    }
    return
  }

  const items = spec.kind === 'mixed' ? spec.items : [spec.item]
  const messages = items.map((item) => {
    if (!item.valid) return item.message
    const message = { ...(item.message as Record<string, unknown>), messageId: `fz-${sequence++}` }
    return message
  })
  let path: string
  let text: string
  if (spec.kind === 'mixed') {
    path = spec.path
    text = JSON.stringify({ batch: messages, ...(spec.batchContext ? { context: spec.batchContext } : {}) })
  } else {
    path = `/v1/${spec.type}`
    text = JSON.stringify(messages[0])
  }
  let body = Buffer.from(text)
  const headers: Record<string, string> = { 'content-type': 'application/json', ...authHeader('writeKey') }
  if (spec.kind === 'mixed' && spec.gzip) {
    body = gzipSync(body)
    headers['content-encoding'] = 'gzip'
  }
  const answer = await request(pool, { method: 'POST', path, headers, body }, spec.label)
  checkAnswer(spec.label, answer)
  assert.equal(answer.status, 200, `${spec.label}: ${answer.text.slice(0, 500)}`)
  const result = JSON.parse(answer.text)
  const invalid = items.flatMap((item, index) => (item.valid ? [] : [index]))
  if (invalid.length === 0) {
    assert.deepEqual(result, { success: true }, `${spec.label}: every message was valid`)
  } else {
    assert.equal(result.success, true)
    assert.equal(
      result.accepted,
      items.length - invalid.length,
      `${spec.label}: accepted count, ${answer.text.slice(0, 500)}`,
    )
    assert.deepEqual(
      result.rejected.map((r: { index: number }) => r.index),
      invalid,
      `${spec.label}: rejected exactly the invalid items (${invalid.map((i) => items[i]!.why).join(', ')}): ${answer.text.slice(0, 800)}`,
    )
    for (const rejection of result.rejected) {
      assert.ok(
        typeof rejection.error === 'string' && rejection.error.length > 0,
        `${spec.label}: a rejection without a message`,
      )
    }
  }
  items.forEach((item, index) => {
    if (item.valid) {
      const message = messages[index] as Record<string, unknown>
      tally.validSent.set(message.messageId as string, message)
    }
  })
}

// ------------------------------------------------------------------------------------------- test

// --------------------------------------------------------------- what the fuzzer found, pinned down

/** One Tracking API call with the fuzz source's key, answering status and parsed body. */
async function track(path: string, raw: string): Promise<{ status: number; body: any }> {
  const response = await fetch(sluice.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authHeader('writeKey') },
    body: raw,
  })
  return { status: response.status, body: await response.json() }
}

test('nesting: a message may nest 100 levels, a deeper one is rejected alone; a batch context one level less', async () => {
  // message (1) > properties (2) > p (3) > ... : `depth` more levels inside p's object.
  const message = (depth: number, messageId: string) =>
    `{"type":"track","userId":"u","event":"Deep","messageId":"${messageId}","properties":{"p":${nestedText(depth, 'object')}}}`
  const atLimit = await track(
    '/v1/batch',
    `{"batch":[${message(MAX_NESTING_DEPTH - 2, 'deep-ok')},${message(MAX_NESTING_DEPTH - 1, 'deep-over')}]}`,
  )
  assert.equal(atLimit.status, 200)
  assert.equal(atLimit.body.accepted, 1)
  assert.deepEqual(
    atLimit.body.rejected.map((r: { index: number }) => r.index),
    [1],
  )
  assert.match(atLimit.body.rejected[0].error, /nested more than 100 levels/)
  // Thousands of levels: rejected the same way, not a 500 from a stack overflow.
  for (const depth of [5_000, 60_000]) {
    const deep = await track(
      '/v1/track',
      `{"userId":"u","event":"Deep","properties":{"p":${nestedText(depth, depth % 2 ? 'array' : 'object')}}}`,
    )
    assert.equal(deep.status, 200, JSON.stringify(deep.body))
    assert.equal(deep.body.accepted, 0)
  }
  // The batch context is merged one level down into every message.
  const context = (depth: number) =>
    `{"batch":[{"type":"track","userId":"u","event":"E"}],"context":{"c":${nestedText(depth, 'array')}}}`
  assert.equal((await track('/v1/batch', context(MAX_NESTING_DEPTH - 2))).status, 200)
  const tooDeep = await track('/v1/batch', context(MAX_NESTING_DEPTH - 1))
  assert.equal(tooDeep.status, 400)
  assert.equal(tooDeep.body.error.code, 'nested_too_deep')
  const farTooDeep = await track('/v1/batch', context(20_000))
  assert.equal(farTooDeep.status, 400)
})

test('timestamps: epoch milliseconds outside the years 0000-9999 are rejected alone; such a batch sentAt is ignored', async () => {
  const call = (fields: string) => `{"type":"track","userId":"u","event":"Time",${fields}}`
  const answer = await track(
    '/v1/batch',
    `{"batch":[${call('"timestamp":1e20')},${call('"timestamp":-8.64e15,"sentAt":8.64e15')},${call('"sentAt":1e300')},${call('"timestamp":253402300799999,"messageId":"last-ms"')},${call('"timestamp":253402300800000')}]}`,
  )
  assert.equal(answer.status, 200, JSON.stringify(answer.body))
  assert.deepEqual(
    answer.body.rejected.map((r: { index: number }) => r.index),
    [0, 1, 2, 4],
  )
  for (const rejection of answer.body.rejected) assert.match(rejection.error, /ISO 8601/)
  // A batch-level sentAt no clock can be at: ignored, the client timestamp is kept as sent.
  const ignored = await track(
    '/v1/batch',
    `{"sentAt":1e300,"batch":[${call('"timestamp":"2026-01-31T12:00:00.000Z","messageId":"sent-at-ignored"')}]}`,
  )
  assert.deepEqual(ignored.body, { success: true })
  const store = new SqliteStore({ dataDir, synchronous: 'NORMAL' })
  try {
    const stored = await store.getMessage(fuzzSource.id, 'sent-at-ignored')
    assert.equal(stored?.payload.timestamp, '2026-01-31T12:00:00.000Z')
    assert.equal(stored?.payload.sentAt, undefined)
  } finally {
    await store.close()
  }
})

test('a page call’s "__proto__" property is delivered as a property, not swallowed as a prototype', async () => {
  const answer = await track(
    '/v1/page',
    '{"userId":"u","messageId":"fz-page-proto","properties":{"path":"/p","__proto__":{"polluted":"no"},"constructor":{"prototype":{"x":1}}}}',
  )
  assert.deepEqual(answer.body, { success: true })
  const delivered = await until<any>(
    'the page call at the receiver',
    () => deliveredBodies.get('fz-page-proto'),
    Boolean,
  )
  assert.deepEqual(Object.keys(delivered.properties), ['path', '__proto__', 'constructor'])
  assert.deepEqual(Object.getOwnPropertyDescriptor(delivered.properties, '__proto__')?.value, {
    polluted: 'no',
  })
})

test('errors raised before routing (malformed percent-encoding, a path parameter over 100 characters, broken HTTP) are the documented JSON too', async () => {
  const port = Number(new URL(sluice.url).port)
  const cases: Array<[string, string]> = [
    [
      'malformed percent-encoding, management API',
      `GET /api/v1/sources/%zz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\n\r\n`,
    ],
    [
      'invalid UTF-8 percent-encoding',
      `GET /api/v1/destinations/%ff/stats HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\n\r\n`,
    ],
    [
      'malformed percent-encoding, Tracking API',
      'POST /v1/%zz HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}',
    ],
    [
      'a path parameter over 100 characters',
      `GET /api/v1/sources/${'x'.repeat(101)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\n\r\n`,
    ],
    ['not HTTP at all', 'GARBAGE\r\n\r\n'],
    ['an unreadable Content-Length', 'POST /v1/batch HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
    [
      'two Content-Lengths',
      'POST /v1/batch HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
    ],
    [
      'broken chunked encoding',
      'POST /v1/batch HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    ],
    ['headers over 16 KB', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
  ]
  const failures: string[] = []
  for (const [name, raw] of cases) {
    const answer = await rawHttp(port, raw)
    const [head = '', ...rest] = answer.split('\r\n\r\n')
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1])
    const contentType = /^content-type: *(.*)$/im.exec(head)?.[1]
    try {
      assertJsonError(status, contentType, rest.join('\r\n\r\n'), name)
    } catch (error) {
      failures.push((error as Error).message.split('\n')[0]!)
    }
  }
  assert.equal(sluice.child.exitCode, null)
  assert.deepEqual(failures, [], 'answers not in the documented {"error": {"code", "message"}} shape')
})

/** Writes raw bytes on a fresh connection; resolves with everything read until the server closes or 3 s pass. */
function rawHttp(port: number, raw: string): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    const socket = connect(port, '127.0.0.1', () => socket.end(raw))
    const done = () => resolve(Buffer.concat(chunks).toString('utf8'))
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('close', done)
    socket.on('error', done)
    socket.setTimeout(3_000, () => socket.destroy())
  })
}

test(`fuzz: ${TARGET_REQUESTS.toLocaleString('en-US')}+ bad, hostile and mixed requests to the Tracking and management APIs`, async (t) => {
  const specArb: fc.Arbitrary<Spec> = fc.oneof(
    { arbitrary: mixedArb, weight: 16 },
    { arbitrary: singleArb, weight: 6 },
    { arbitrary: randomBytesArb, weight: 8 },
    { arbitrary: randomJsonArb, weight: 8 },
    { arbitrary: brokenJsonArb, weight: 6 },
    { arbitrary: badCompressionArb, weight: 6 },
    { arbitrary: wrongCharsetArb, weight: 5 },
    { arbitrary: deepArb, weight: 5 },
    { arbitrary: protoArb, weight: 5 },
    { arbitrary: oversizedArb, weight: 1 },
    { arbitrary: manageArb, weight: 30 },
    { arbitrary: manageOversizedArb, weight: 1 },
  )
  const pool = new Pool(sluice.url, { connections: 32, pipelining: 1, keepAliveTimeout: 30_000 })
  const pristine = await sluice.inspect()
  assert.ok(pristine.gcExposed, 'the child can collect garbage on request')
  try {
    // Warm up (JIT, connection pools, SQLite pages, allocator arenas) before the memory baseline.
    await fuzz(pool, specArb, WARM_UP_RUNS, 7)
    const before = await sluice.inspect()
    const started = performance.now()
    const requestsBefore = tally.requests
    const seed = Number(process.env.SLUICE_FUZZ_SEED ?? Date.now() % 2 ** 31)
    // Printed first, so a failure anywhere below can be replayed with SLUICE_FUZZ_SEED.
    t.diagnostic(`fuzz seed ${seed} (SLUICE_FUZZ_SEED=${seed} replays this run)`)
    const runs = Math.ceil(TARGET_REQUESTS / GROUP)
    await fuzz(pool, specArb, Math.ceil(runs / 2), seed)
    const halfway = await sluice.inspect()
    await fuzz(pool, specArb, Math.floor(runs / 2), seed + 1)
    const elapsedS = (performance.now() - started) / 1000
    const sent = tally.requests - requestsBefore
    assert.ok(sent >= TARGET_REQUESTS, `only ${sent} requests were sent`)

    // No crash: the same process still answers, on the same keep-alive pool.
    assert.equal(sluice.child.exitCode, null, 'the Sluice process exited')
    const health = await request(pool, { method: 'GET', path: '/healthz', headers: {} }, 'healthz')
    assert.equal(health.status, 200)

    // Every valid message of a mixed batch (or valid single call) is in the store...
    const store = new SqliteStore({ dataDir, synchronous: 'NORMAL' })
    const ids = [...tally.validSent.keys()]
    try {
      const missing: string[] = []
      for (let i = 0; i < ids.length; i += 256) {
        const chunk = ids.slice(i, i + 256)
        const found = await Promise.all(chunk.map((id) => store.getMessage(fuzzSource.id, id)))
        found.forEach((message, j) => {
          if (message === null) missing.push(chunk[j]!)
        })
      }
      assert.deepEqual(
        missing.slice(0, 20),
        [],
        `${missing.length} of ${ids.length} valid messages are not in the store`,
      )

      // ...and was delivered, its data intact, and nothing accepted failed to deliver.
      await until(
        `all ${ids.length} valid messages to be delivered`,
        () => ids.filter((id) => !deliveredBodies.has(id)).length,
        (left) => left === 0,
        60_000,
        100,
      )
      for (const id of ids) checkDelivered(id, tally.validSent.get(id)!, deliveredBodies.get(id))
      assert.equal(
        await store.countDeliveries({ status: 'failed' }),
        0,
        'an accepted message could not be delivered',
      )

      // Safety net: no fuzzed request pointed a destination anywhere but 127.0.0.1.
      for (const destination of await store.listDestinations()) {
        for (const { url } of destination.settings.webhooks) {
          assert.match(url, /^https?:\/\/127\.0\.0\.1:/, `destination ${destination.id}`)
        }
      }
    } finally {
      await store.close()
    }

    // Object.prototype (and Array's, Function's) untouched inside the server process.
    const afterwards = await sluice.inspect()
    assert.deepEqual(afterwards.objectPrototype, pristine.objectPrototype, 'Object.prototype gained members')
    assert.deepEqual(afterwards.arrayPrototype, pristine.arrayPrototype, 'Array.prototype gained members')
    assert.deepEqual(
      afterwards.functionPrototype,
      pristine.functionPrototype,
      'Function.prototype gained members',
    )
    assert.ok(!afterwards.objectPrototype.some((name) => POLLUTION_MARKERS.includes(name)))
    // And behaviourally: a call without a user id is still refused.
    const probe = await request(
      pool,
      {
        method: 'POST',
        path: '/v1/track',
        headers: { 'content-type': 'application/json', ...authHeader('writeKey') },
        body: Buffer.from('{"event":"E"}'),
      },
      'pollution probe',
    )
    assert.match(probe.text, /userId or \.anonymousId is required/)

    // Nothing was logged as an error (a 5xx, or a delivery that could not be prepared).
    const errors = sluice
      .output()
      .split('\n')
      .filter((line) => /"level":(5\d|60)/.test(line))
    assert.deepEqual(errors.slice(0, 5), [], `${errors.length} error lines in the log`)

    // Memory came back: heap and RSS after a GC, against the warm baseline; the peak is reported.
    const heapGrowth = afterwards.memory.heapUsed - before.memory.heapUsed
    const rssGrowth = afterwards.memory.rss - halfway.memory.rss
    const { peak } = memoryOf(sluice.child.pid!)
    const statuses = [...tally.byStatus.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([status, n]) => `${status}: ${n}`)
      .join(', ')
    const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`
    t.diagnostic(
      `fuzz: ${sent} requests in ${elapsedS.toFixed(1)} s (${Math.round(sent / elapsedS)}/s, ${GROUP} concurrent, seed ${seed}); ` +
        `slowest answer ${Math.round(tally.maxLatencyMs)} ms; statuses ${statuses}; ${ids.length} valid messages stored and delivered intact; ` +
        `server heap ${mb(before.memory.heapUsed)} -> ${mb(afterwards.memory.heapUsed)}, ` +
        `RSS ${mb(before.memory.rss)} -> ${mb(halfway.memory.rss)} (halfway) -> ${mb(afterwards.memory.rss)}, peak RSS ${mb(peak)}`,
    )
    t.diagnostic(
      `fuzz by kind: ${[...tally.byLabel.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([label, n]) => `${label}: ${n}`)
        .join('; ')}`,
    )
    assert.ok(heapGrowth < HEAP_GROWTH_BOUND, `server heap grew by ${mb(heapGrowth)}`)
    assert.ok(rssGrowth < RSS_SECOND_HALF_BOUND, `server RSS grew by ${mb(rssGrowth)} over the second half`)
    assert.ok(peak < PEAK_RSS_BOUND, `server RSS peaked at ${mb(peak)}`)

    // And it still shuts down cleanly.
    sluice.child.kill('SIGTERM')
    assert.equal(await sluice.exited, 0)
  } finally {
    await pool.close()
  }
})

/**
 * Runs `numRuns` groups of GROUP concurrent requests. The first failing group ends the run without
 * shrinking: each shrink step would send a whole group again to a server whose state the earlier
 * groups changed, so shrinking is slow (on a loaded machine it ran for over half an hour) and not
 * reliable, and the request that failed is already a small reproduction. The report names the seed
 * (rerun with SLUICE_FUZZ_SEED), how many requests of the group failed, and each of them, bodies cut short.
 */
async function fuzz(pool: Pool, specArb: fc.Arbitrary<Spec>, numRuns: number, seed: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.array(specArb, { minLength: GROUP, maxLength: GROUP }), async (specs) => {
      const settled = await Promise.allSettled(specs.map((spec) => sendSpec(pool, spec)))
      const failures = settled.flatMap((outcome, index) =>
        outcome.status === 'rejected' ? [{ spec: specs[index]!, reason: outcome.reason }] : [],
      )
      if (failures.length === 0) return
      const shown = failures.slice(0, 5).map(({ spec, reason }) => {
        const cause = reason instanceof Error ? reason.message : String(reason)
        return `- ${cause.slice(0, 1500)}\n  request: ${showSpec(spec)}`
      })
      throw new Error(`${failures.length} of ${specs.length} requests failed:\n${shown.join('\n')}`)
    }),
    {
      numRuns,
      seed,
      endOnFailure: true,
      asyncReporter: async (details) => {
        if (!details.failed) return
        const cause =
          details.errorInstance instanceof Error
            ? details.errorInstance.message
            : String(details.errorInstance)
        throw new Error(
          `Fuzzing failed (seed ${details.seed}, run ${details.numRuns}):\n${cause.slice(0, 8000)}`,
        )
      },
    },
  )
}

/** One request as JSON, its body and long strings cut short. */
function showSpec(spec: Spec): string {
  return JSON.stringify(spec, (_key, value) => {
    if (value?.type === 'Buffer' && Array.isArray(value.data)) {
      return `<${value.data.length} bytes: ${Buffer.from(value.data).toString('utf8').slice(0, 200)}>`
    }
    return typeof value === 'string' && value.length > 200 ? `${value.slice(0, 200)}…` : value
  })
}

/** The delivered body carries what the client sent: ids, and properties/traits member for member. */
function checkDelivered(messageId: string, sent: Record<string, unknown>, delivered: any): void {
  const label = `delivered ${messageId} (${sent.type})`
  const roundTrip = (value: unknown) => JSON.parse(JSON.stringify(value ?? {}))
  assert.equal(delivered.messageId, messageId, label)
  assert.equal(delivered.type, sent.type, label)
  switch (sent.type) {
    case 'track':
      assert.equal(delivered.event, sent.event, label)
      assert.deepEqual(delivered.properties, roundTrip(sent.properties), label)
      break
    case 'identify':
    case 'group':
      assert.deepEqual(delivered.traits, roundTrip(sent.traits), label)
      if (sent.type === 'group') assert.equal(delivered.groupId, String(sent.groupId), label)
      break
    case 'page': {
      const properties = roundTrip(sent.properties)
      for (const [key, value] of Object.entries(properties)) {
        if (!PAGE_FIELDS.includes(key) || typeof value === 'string') {
          assert.ok(
            Object.hasOwn(delivered.properties, key),
            `${label}: property ${JSON.stringify(key)} was dropped`,
          )
          assert.deepEqual(delivered.properties[key], value, `${label}: property ${JSON.stringify(key)}`)
        }
      }
      break
    }
    case 'screen':
      if (sent.properties) assert.deepEqual(delivered.properties, roundTrip(sent.properties), label)
      break
    case 'alias':
      assert.equal(delivered['Previous ID'], String(sent.previousId), label)
      assert.equal(delivered['User ID'], String(sent.userId), label)
      break
  }
  if (sent.type !== 'alias') {
    assert.equal(delivered.userId, sent.userId === undefined ? null : String(sent.userId), label)
  }
}
