/**
 * JSON Schemas of the access routes (tokens, web-app sessions), and the types derived from them.
 */
import { TOKEN_ROLES } from '../domain/tokens.ts'
import {
  ADMIN_SECURITY,
  authErrors,
  commonErrors,
  deleted,
  errorResponse,
  idParams,
  nullableTimestamp,
  type ResponseShape,
  resourceName,
  timestamp,
  withNotFound,
} from './common-schemas.ts'

const role = {
  type: 'string',
  enum: TOKEN_ROLES,
  description: '`admin` may do everything; `viewer` may read everything but secrets, and change nothing.',
} as const

const token = {
  type: 'object',
  required: ['id', 'name', 'role', 'createdAt', 'lastUsedAt'],
  properties: {
    id: { type: 'string', description: 'The token id, `tok_…` (not the token itself).' },
    name: { type: 'string' },
    role,
    createdAt: timestamp,
    lastUsedAt: {
      ...nullableTimestamp,
      description: 'When the token last authenticated a request (to the minute); null if never.',
    },
  },
} as const

/** A token's record as the API shows it. */
export type TokenView = ResponseShape<typeof token>

const tokenTags = ['Access']
const forbidden = { 403: errorResponse } as const

export const createTokenSchema = {
  tags: tokenTags,
  summary: 'Create an access token',
  description:
    'Creates a token for the management API and the web app. The answer is the only time the token is shown; only its hash is stored.',
  security: ADMIN_SECURITY,
  body: {
    type: 'object',
    required: ['name', 'role'],
    additionalProperties: false,
    properties: { name: resourceName, role },
  },
  response: {
    201: {
      description: 'The new token: keep `token`, it cannot be shown again.',
      type: 'object',
      required: [...token.required, 'token'],
      properties: { ...token.properties, token: { type: 'string', description: 'The token itself.' } },
    },
    ...commonErrors,
    ...forbidden,
  },
} as const

export const listTokensSchema = {
  tags: tokenTags,
  summary: 'List access tokens',
  security: ADMIN_SECURITY,
  response: {
    200: {
      description: 'Every access token (never the tokens themselves), oldest first.',
      type: 'object',
      required: ['tokens'],
      properties: { tokens: { type: 'array', items: token } },
    },
    ...authErrors,
    ...forbidden,
  },
} as const

export const deleteTokenSchema = {
  tags: tokenTags,
  summary: 'Revoke an access token',
  description:
    'Deletes the token. Every Sluice process refuses it, and its web-app sessions, within 5 seconds.',
  security: ADMIN_SECURITY,
  params: idParams,
  response: { 204: deleted, ...withNotFound, ...forbidden },
} as const

const session = {
  type: 'object',
  required: ['role', 'name'],
  properties: {
    role,
    name: { type: 'string', description: 'The name of the token the session was opened with.' },
  },
} as const

/** Who a session acts for. */
export type SessionView = ResponseShape<typeof session>

export const signInSchema = {
  tags: tokenTags,
  summary: 'Sign in to the web app',
  description:
    'Opens a web-app session with an access token (or the admin token): the answer sets an HttpOnly, SameSite=Strict session cookie. Changes made with the cookie must send the `X-Sluice-CSRF` header.',
  body: {
    type: 'object',
    required: ['token'],
    additionalProperties: false,
    properties: { token: { type: 'string', minLength: 1, maxLength: 200, description: 'An access token.' } },
  },
  response: { 200: { ...session, description: 'Signed in.' }, ...commonErrors },
} as const

export const currentSessionSchema = {
  tags: tokenTags,
  summary: 'Who is signed in',
  security: ADMIN_SECURITY,
  response: { 200: { ...session, description: 'The session (or bearer token) in use.' }, ...authErrors },
} as const

export const signOutSchema = {
  tags: tokenTags,
  summary: 'Sign out of the web app',
  description:
    'Ends the session: its cookie is refused from then on by every Sluice process sharing the database (within 2 s on the others), and clears the cookie.',
  response: { 204: deleted },
} as const
