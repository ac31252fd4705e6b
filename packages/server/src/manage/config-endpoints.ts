/**
 * HTTP endpoints for configuration as code: `GET /config` (export), `POST /config/plan` and
 * `POST /config/apply`. The document's own schema is served by `configSchemaEndpoint`, without a token.
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import type { FastifyInstance } from 'fastify'
import { InvalidDocumentError } from '../domain/config-document.ts'
import type { ConfigService } from '../domain/config-service.ts'
import { HttpError } from '../lib/errors.ts'
import { canSeeSecrets } from './auth.ts'
import {
  applyConfigSchema,
  CONFIG_SCHEMA_PATH,
  configDocumentSchema,
  exportConfigSchema,
  planConfigSchema,
} from './config-schemas.ts'
import { configForViewer, maskedValues } from './views.ts'

export const configEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: { config: ConfigService }
}> = async (app, { config }) => {
  app.get('/config', { schema: exportConfigSchema }, async (request) => {
    const secrets = request.query.secrets === 'include'
    if (secrets && !canSeeSecrets(request)) {
      throw new HttpError(
        403,
        'forbidden',
        'Only an admin token may export secrets (secrets=include); a viewer gets placeholders without it.',
      )
    }
    const document = await config.export({ secrets })
    return canSeeSecrets(request) ? document : configForViewer(document)
  })

  // An invalid document throws InvalidDocumentError: the server renders it as 400 with every problem.
  app.post('/config/plan', { schema: planConfigSchema }, async (request) => {
    refuseMasked(request.body)
    return { changes: await config.plan(request.body) }
  })

  app.post('/config/apply', { schema: applyConfigSchema }, async (request) => {
    refuseMasked(request.body)
    return { changes: await config.apply(request.body) }
  })
}

/** A viewer's export has masked values; applied, they would replace the real ones. */
function refuseMasked(document: unknown): void {
  const masked = maskedValues(document)
  if (masked.length === 0) return
  throw new InvalidDocumentError(
    masked.map((field) => ({
      field,
      message:
        'This value is masked: the document was exported with a viewer token. Export with an admin token (GET /api/v1/config), or write the value.',
    })),
  )
}

/** `GET /api/config.schema.json`: the document's JSON Schema, public like the OpenAPI document. */
export function configSchemaEndpoint(app: FastifyInstance): void {
  app.get(CONFIG_SCHEMA_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/schema+json').send(configDocumentSchema),
  )
}
