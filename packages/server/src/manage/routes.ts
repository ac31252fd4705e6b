/**
 * The management API plugin, registered under `/api/v1`. Every route in it requires the admin token.
 */
import type { FastifyPluginAsync } from 'fastify'
import type { Store } from '../store/store.ts'
import { requireAdminToken } from './auth.ts'
import { type DeliveryControl, deliveryRoutes } from './deliveries.ts'
import { destinationRoutes } from './destinations.ts'
import { rephraseRequestError } from './request-errors.ts'
import { sourceRoutes } from './sources.ts'
import { checkBodyStrictly, checkQueryStrictly, formatSchemaError } from './validation.ts'

export interface ManagementApiOptions {
  store: Store
  adminToken: string
  /** Replays wake it; test sends go through it. */
  engine: DeliveryControl
}

export const managementApi: FastifyPluginAsync<ManagementApiOptions> = async (
  app,
  { store, adminToken, engine },
) => {
  // Hooks and the formatter apply to this plugin only (Fastify encapsulation), not to the Tracking API.
  app.addHook('onRequest', requireAdminToken(adminToken))
  app.addHook('preValidation', checkBodyStrictly)
  app.addHook('preValidation', checkQueryStrictly)
  app.setSchemaErrorFormatter(formatSchemaError)
  // Throwing hands the (possibly rephrased) error to the server's handler, which renders every error.
  app.setErrorHandler((error) => {
    throw rephraseRequestError(error)
  })

  await app.register(sourceRoutes, { store })
  await app.register(destinationRoutes, { store, engine })
  await app.register(deliveryRoutes, { store, engine })
}
