/**
 * HTTP endpoints for operational alerts and notices: `/alerts` (admins only, reads included: the URL
 * may carry a token) and `/notices`.
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import type { AlertService } from '../domain/alert-service.ts'
import { NotFoundError } from '../domain/errors.ts'
import { deleteAlertsSchema, getAlertsSchema, listNoticesSchema, putAlertsSchema } from './alert-schemas.ts'
import { canSeeSecrets, requireAdmin } from './auth.ts'
import { alertSettingsView, noticeView } from './views.ts'

export const alertEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: { alerts: AlertService }
}> = async (app, { alerts }) => {
  app.get('/alerts', { schema: getAlertsSchema, preHandler: requireAdmin }, async () => {
    const settings = await alerts.get()
    if (settings === null) {
      throw new NotFoundError(
        'alerts_not_set',
        'No alert URL is set. Set one with PUT /api/v1/alerts {"url": "https://example.com/sluice-alerts"}.',
      )
    }
    return alertSettingsView(settings, null)
  })

  app.put('/alerts', { schema: putAlertsSchema, preHandler: requireAdmin }, async (request) => {
    const { settings, generatedSecret } = await alerts.put(request.body)
    return alertSettingsView(settings, generatedSecret)
  })

  app.delete('/alerts', { schema: deleteAlertsSchema, preHandler: requireAdmin }, async (_request, reply) => {
    await alerts.remove()
    return reply.code(204).send(null)
  })

  app.get('/notices', { schema: listNoticesSchema }, async (request) => ({
    notices: (await alerts.notices(request.query.limit)).map((event) =>
      noticeView(event, canSeeSecrets(request)),
    ),
  }))
}
