import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { TEST_EVENT } from '../../src/deliver/test-event.ts'
import { DESTINATION_TYPES } from '../../src/domain/destinations.ts'
import { NAME_MAX_LENGTH } from '../../src/domain/names.ts'
import { RESERVED_HEADER_NAMES, WEBHOOKS_LIMITS } from '../../src/domain/webhook-settings.ts'
import { startTestSluice, type TestSluice } from '../helpers/sluice.ts'

interface Operation {
  tags?: string[]
  summary?: string
  security?: Array<Record<string, string[]>>
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> }
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>
}

describe('OpenAPI document', () => {
  let sluice: TestSluice
  // any: the document is arbitrary JSON, checked member by member.
  let document: any

  before(async () => {
    sluice = await startTestSluice()
    const response = await fetch(`${sluice.url}/api/openapi.json`)
    assert.equal(response.status, 200)
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/)
    document = JSON.parse(await response.text())
  })
  after(() => sluice.destroy())

  test('is OpenAPI 3 with a title and the bearer scheme', () => {
    assert.match(document.openapi, /^3\.\d+\.\d+$/)
    assert.equal(document.info.title, 'Sluice')
    assert.equal(typeof document.info.version, 'string')
    assert.deepEqual(
      {
        type: document.components.securitySchemes.adminToken.type,
        scheme: document.components.securitySchemes.adminToken.scheme,
      },
      { type: 'http', scheme: 'bearer' },
    )
  })

  test('lists every management operation, tagged, summarized, secured and with responses', () => {
    const expected: Record<string, string[]> = {
      '/api/v1/sources': ['get', 'post'],
      '/api/v1/sources/{id}': ['delete', 'get', 'patch'],
      '/api/v1/sources/{id}/rotate-write-key': ['post'],
      '/api/v1/destinations': ['get', 'post'],
      '/api/v1/destinations/{id}': ['delete', 'get', 'patch'],
      '/api/v1/profiles': ['get'],
      '/api/v1/profiles/{id}': ['get'],
      '/api/v1/profiles/{id}/events': ['get'],
      '/api/v1/computed-traits': ['get', 'post'],
      '/api/v1/computed-traits/{id}': ['delete', 'get', 'patch'],
      '/api/v1/audiences': ['get', 'post'],
      '/api/v1/audiences/preview': ['post'],
      '/api/v1/audiences/{id}': ['delete', 'get', 'patch'],
    }
    for (const [path, methods] of Object.entries(expected)) {
      assert.ok(document.paths[path], `missing path ${path}`)
      assert.deepEqual(
        Object.keys(document.paths[path])
          .filter((key) => key !== 'parameters')
          .sort(),
        methods,
        path,
      )
      for (const method of methods) {
        const operation: Operation = document.paths[path][method]
        const label = `${method} ${path}`
        assert.ok(operation.tags?.length, `${label} has tags`)
        assert.ok(operation.summary, `${label} has a summary`)
        assert.deepEqual(operation.security, [{ adminToken: [] }], label)
        assert.ok(operation.responses['401'], `${label} documents 401`)
        const success = Object.keys(operation.responses).find((status) => status.startsWith('2'))
        assert.ok(success, `${label} documents its success response`)
      }
    }
    assert.equal(document.paths['/api/openapi.json'], undefined, 'the document itself is not listed')
  })

  test('request schemas are the validating ones; responses never carry the shared secret', () => {
    const create = document.paths['/api/v1/destinations'].post as Operation
    const body = create.requestBody?.content['application/json']?.schema as {
      additionalProperties: boolean
      properties: { settings: { properties: Record<string, unknown> } }
    }
    assert.equal(body.additionalProperties, false)
    assert.ok(body.properties.settings.properties.sharedSecret, 'sharedSecret is documented as input')
    const responseSchema = JSON.stringify(create.responses['201']?.content?.['application/json']?.schema)
    assert.ok(!responseSchema.includes('"sharedSecret"'))
    assert.ok(responseSchema.includes('"sharedSecretSet"'))
  })

  test('rules and limits are described from the constants the code enforces', () => {
    const json = (operation: Operation) => operation.requestBody?.content['application/json']?.schema as any
    const createBody = json(document.paths['/api/v1/destinations'].post)
    assert.deepEqual(createBody.properties.type.enum, DESTINATION_TYPES)
    assert.equal(createBody.properties.name.maxLength, NAME_MAX_LENGTH)
    assert.equal(json(document.paths['/api/v1/sources'].post).properties.name.maxLength, NAME_MAX_LENGTH)
    const headers = createBody.properties.settings.properties.webhooks.items.properties.headers
    assert.equal(headers.maxProperties, WEBHOOKS_LIMITS.maxHeadersPerUrl)
    for (const reserved of RESERVED_HEADER_NAMES) {
      assert.ok(headers.description.includes(reserved), `the headers description names ${reserved}`)
    }

    const stats =
      document.paths['/api/v1/destinations/{id}/stats'].get.responses['200'].content['application/json']
        .schema
    assert.match(
      stats.properties.deadLettered.description,
      /SLUICE_RETRY_WINDOW_SECONDS.*by default/,
      'the retry window is a setting, not a fixed time',
    )
    const testSend = document.paths['/api/v1/destinations/{id}/test'].post
    assert.ok(testSend.description.includes(`userId \`${TEST_EVENT.userId}\``))
    assert.ok(testSend.description.includes(`event \`${TEST_EVENT.event}\``))
  })
})
