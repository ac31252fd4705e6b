/**
 * HTTP endpoints for profiles: `GET /profiles?userId=|anonymousId=`, `/profiles/search?q=`, `/profiles/:id`,
 * `/profiles/:id/events`.
 */
import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts'
import type { ProfileService } from '../domain/profile-service.ts'
import {
  findProfileSchema,
  getProfileSchema,
  listProfileEventsSchema,
  searchProfilesSchema,
} from './profile-schemas.ts'
import { profileEventView, profileIdentitiesView, profileView } from './views.ts'

export const profileEndpoints: FastifyPluginAsyncJsonSchemaToTs<{
  Options: { profiles: ProfileService }
}> = async (app, { profiles }) => {
  app.get('/profiles', { schema: findProfileSchema }, async (request) =>
    profileView(await profiles.find(request.query)),
  )

  app.get('/profiles/search', { schema: searchProfilesSchema }, async (request) => ({
    profiles: (await profiles.search(request.query.q, request.query.limit)).map(profileIdentitiesView),
  }))

  app.get('/profiles/:id', { schema: getProfileSchema }, async (request) =>
    profileView(await profiles.get(request.params.id)),
  )

  app.get('/profiles/:id/events', { schema: listProfileEventsSchema }, async (request) => {
    const page = await profiles.events(request.params.id, request.query)
    return { events: page.events.map(profileEventView), nextCursor: page.nextCursor }
  })
}
