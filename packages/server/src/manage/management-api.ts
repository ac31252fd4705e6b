/**
 * The management API plugin, registered under `/api/v1`. Every route in it but sign-in requires a token
 * (the admin token, an access token, or a web-app session); viewer tokens may only read.
 * Its endpoints only translate: they take the validated request, call the domain services (which
 * hold the product's rules and are shared with the CLI), and render the answer.
 */
import type { FastifyPluginAsync } from 'fastify'
import { DryRunService } from '../deliver/dry-run.ts'
import { TestEventService, type TestSender } from '../deliver/test-event.ts'
import { AudienceService } from '../domain/audience-service.ts'
import { ComputedTraitService } from '../domain/computed-trait-service.ts'
import { ConfigService } from '../domain/config-service.ts'
import { DeliveryService } from '../domain/delivery-service.ts'
import { DestinationService } from '../domain/destination-service.ts'
import { ProfileService } from '../domain/profile-service.ts'
import { RegulationService } from '../domain/regulation-service.ts'
import { deletesData } from '../domain/regulations.ts'
import { SourceService } from '../domain/source-service.ts'
import { TokenService } from '../domain/token-service.ts'
import type { LiveCalls } from '../ingest/live-calls.ts'
import type { Store } from '../store/store.ts'
import type { AccessControl } from './access-control.ts'
import { audienceEndpoints } from './audience-endpoints.ts'
import { requireAccess } from './auth.ts'
import { computedTraitEndpoints } from './computed-trait-endpoints.ts'
import { configEndpoints } from './config-endpoints.ts'
import { SETTINGS_FIELDS } from './config-schemas.ts'
import { deliveryEndpoints } from './delivery-endpoints.ts'
import { destinationEndpoints } from './destination-endpoints.ts'
import { dryRunEndpoints } from './dry-run-endpoints.ts'
import { liveEndpoints } from './live-endpoints.ts'
import { profileEndpoints } from './profile-endpoints.ts'
import { regulationEndpoints } from './regulation-endpoints.ts'
import { rephraseRequestError } from './request-errors.ts'
import {
  checkBodyDepth,
  checkBodyStrictly,
  checkQueryStrictly,
  formatSchemaError,
} from './request-validation.ts'
import { sessionEndpoints } from './session-endpoints.ts'
import { sourceEndpoints } from './source-endpoints.ts'
import { tokenEndpoints } from './token-endpoints.ts'

export interface ManagementApiOptions {
  store: Store
  /** Who may call: the admin token, access tokens, sessions. */
  access: AccessControl
  /** Sends test events (`POST /destinations/:id/test`) like real deliveries: the delivery engine. */
  testSender: TestSender
  /** Awaited after a regulation is recorded, before the `201`: this process's filter reloads. */
  afterRegulation?: () => Promise<void>
  /** `SLUICE_ALLOW_PRIVATE_DESTINATIONS`: whether saving a private webhook URL warns. */
  allowPrivateDestinations: boolean
  /** The Tracking API's judged calls, for the live debugger. */
  liveCalls: LiveCalls
}

export const managementApi: FastifyPluginAsync<ManagementApiOptions> = async (
  app,
  { store, access, testSender, liveCalls, allowPrivateDestinations, afterRegulation },
) => {
  // Hooks and the formatter apply to this plugin only (Fastify encapsulation), not to the Tracking API.
  app.decorateRequest('principal', null)
  app.addHook('preValidation', checkBodyDepth)
  app.addHook('preValidation', checkBodyStrictly)
  app.addHook('preValidation', checkQueryStrictly)
  app.setSchemaErrorFormatter(formatSchemaError)
  // Throwing hands the (possibly rephrased) error to the server's handler, which renders every error.
  app.setErrorHandler((error) => {
    throw rephraseRequestError(error)
  })

  await app.register(sessionEndpoints, { access })
  await app.register(async (protectedApi) => {
    protectedApi.addHook('onRequest', requireAccess(access))
    const sources = new SourceService(store)
    await protectedApi.register(sourceEndpoints, {
      sources,
      onDeleted: (id) => liveCalls.forgetSource(id),
    })
    await protectedApi.register(liveEndpoints, { sources, liveCalls })
    await protectedApi.register(destinationEndpoints, {
      destinations: new DestinationService(store),
      allowPrivateDestinations,
    })
    await protectedApi.register(dryRunEndpoints, { dryRuns: new DryRunService(store) })
    await protectedApi.register(deliveryEndpoints, {
      store,
      deliveries: new DeliveryService(store),
      testEvents: new TestEventService({ store, sender: testSender }),
    })
    await protectedApi.register(tokenEndpoints, { tokens: new TokenService(store) })
    await protectedApi.register(regulationEndpoints, {
      regulations: new RegulationService(store, {
        afterCreate: async (regulation) => {
          // The live debugger's recent calls are kept in memory: an erased user's go with the rest.
          if (deletesData(regulation.regulationType)) liveCalls.forgetUsers(regulation.subjectIds)
          await afterRegulation?.()
        },
      }),
    })
    await protectedApi.register(profileEndpoints, { profiles: new ProfileService(store) })
    await protectedApi.register(computedTraitEndpoints, {
      computedTraits: new ComputedTraitService(store),
    })
    await protectedApi.register(audienceEndpoints, { audiences: new AudienceService(store) })
    await protectedApi.register(configEndpoints, { config: new ConfigService(store, SETTINGS_FIELDS) })
  })
}
