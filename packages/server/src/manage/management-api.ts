/**
 * The management API plugin, registered under `/api/v1`. Every route in it requires the admin token.
 * Its endpoints only translate: they take the validated request, call the domain services (which
 * hold the product's rules and are shared with the CLI), and render the answer.
 */
import type { FastifyPluginAsync } from 'fastify'
import { AudienceService } from '../domain/audience-service.ts'
import { ComputedTraitService } from '../domain/computed-trait-service.ts'
import { DeliveryService } from '../domain/delivery-service.ts'
import { DestinationService } from '../domain/destination-service.ts'
import { ProfileService } from '../domain/profile-service.ts'
import { SourceService } from '../domain/source-service.ts'
import { TestEventService, type TestSender } from '../domain/test-event.ts'
import type { Store } from '../store/store.ts'
import { audienceEndpoints } from './audience-endpoints.ts'
import { requireAdminToken } from './auth.ts'
import { computedTraitEndpoints } from './computed-trait-endpoints.ts'
import { deliveryEndpoints } from './delivery-endpoints.ts'
import { destinationEndpoints } from './destination-endpoints.ts'
import { profileEndpoints } from './profile-endpoints.ts'
import { rephraseRequestError } from './request-errors.ts'
import { checkBodyStrictly, checkQueryStrictly, formatSchemaError } from './request-validation.ts'
import { sourceEndpoints } from './source-endpoints.ts'

export interface ManagementApiOptions {
  store: Store
  adminToken: string
  /** Sends test events (`POST /destinations/:id/test`) like real deliveries: the delivery engine. */
  testSender: TestSender
}

export const managementApi: FastifyPluginAsync<ManagementApiOptions> = async (
  app,
  { store, adminToken, testSender },
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

  await app.register(sourceEndpoints, { sources: new SourceService(store) })
  await app.register(destinationEndpoints, { destinations: new DestinationService(store) })
  await app.register(deliveryEndpoints, {
    deliveries: new DeliveryService(store),
    testEvents: new TestEventService({ store, sender: testSender }),
  })
  await app.register(profileEndpoints, { profiles: new ProfileService(store) })
  await app.register(computedTraitEndpoints, { computedTraits: new ComputedTraitService(store) })
  await app.register(audienceEndpoints, { audiences: new AudienceService(store) })
}
