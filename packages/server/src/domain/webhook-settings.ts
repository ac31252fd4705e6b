/**
 * What a user may configure on a Webhooks destination (docs/webhooks.md), checked once when settings
 * are written so the delivery engine can trust what it reads back. A refusal is the domain's
 * `ValidationError`, naming the field and saying how to fix it.
 *
 * Decisions:
 * - URLs must be absolute http:// or https:// and may not carry credentials (`user:pass@`): they would
 *   be shown back in every API response and log line; put them in a static `Authorization` header.
 * - The same URL may not appear twice in one destination (it would receive every message twice).
 * - Header values are trimmed (HTTP drops surrounding whitespace anyway) and must be printable ASCII.
 * - SSRF is not checked here: a hostname can resolve elsewhere later, so the delivery engine checks
 *   the address it actually dials.
 */

import { isJsonObject } from '../lib/json-object.ts'
import { escapePointerToken, fieldLabel } from '../lib/json-pointer.ts'
import { checkMapping, MappingError } from '../lib/mapping-language.ts'
import { newStandardWebhooksSecret, standardWebhooksSecretProblem } from '../lib/standard-webhooks-secret.ts'
import { checkSubscription, SubscriptionSyntaxError } from '../lib/subscription-language.ts'
import {
  type AutoDisableSettings,
  type BatchingSettings,
  DEFAULT_SIGNING,
  type DestinationFilter,
  FILTER_ACTIONS,
  type RotationState,
  type SigningSettings,
  WEBHOOK_METHODS,
  type WebhookEndpoint,
  type WebhookMethod,
  type WebhooksSettings,
} from './destinations.ts'
import { ValidationError } from './errors.ts'

export const WEBHOOKS_LIMITS = {
  minUrls: 1,
  maxUrls: 5,
  maxUrlLength: 2048,
  maxHeadersPerUrl: 20,
  maxHeaderNameLength: 256,
  maxHeaderValueBytes: 4096,
  maxSecretBytes: 1024,
} as const

/** The ranges of `settings.batching`. */
/** How many filter rules a destination may have, and how many field paths (of what length) one may list. */
export const FILTER_LIMITS = { maxFilters: 10, maxFields: 100, maxPathLength: 200 } as const

export const BATCHING_LIMITS = {
  maxEvents: { min: 1, max: 1000 },
  maxBytes: { min: 1, max: 512_000 },
  maxWaitMs: { min: 0, max: 60_000 },
} as const

/**
 * Headers Sluice sets itself, or that describe the connection rather than the message (`Expect` asks
 * for a `100 Continue` exchange Sluice's HTTP client does not do). Refused in any case.
 */
export const RESERVED_HEADER_NAMES: readonly string[] = [
  'User-Agent',
  'Content-Type',
  'X-Signature',
  'X-Sluice-Replay',
  'X-Signature-Next',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'Host',
  'Content-Length',
  'Expect',
  'Connection',
  'Keep-Alive',
  'Proxy-Connection',
  'Transfer-Encoding',
  'Upgrade',
  'TE',
  'Trailer',
  'Proxy-Authenticate',
  'Proxy-Authorization',
]
const RESERVED_LOWER_CASE = new Set(RESERVED_HEADER_NAMES.map((name) => name.toLowerCase()))

/**
 * Secret settings Sluice makes itself when they are needed: configuration as code keeps them when a
 * document leaves them out (as it keeps a source's write key).
 */
export const SECRETS_SLUICE_MAKES: readonly string[] = ['standardWebhooksSecret']

/** RFC 9110 `token`: the characters a header name may use. */
const HEADER_NAME_PATTERN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/**
 * Validates `input` (the `settings` member of a request) and returns the settings to store.
 * `current` is given for an update: a member the input omits keeps its current value, so a PATCH can
 * change the URLs without resending the secret. `sharedSecret: null` removes the secret.
 * Throws `ValidationError` with a field such as `/settings/webhooks/2/url`.
 */
export function validateWebhooksSettings(input: unknown, current?: WebhooksSettings): WebhooksSettings {
  const field = '/settings'
  if (!isJsonObject(input)) {
    throw new ValidationError(
      field,
      'settings must be an object such as {"webhooks": [{"url": "https://example.com/hooks"}]}.',
    )
  }
  refuseUnknownMembers(input, field, [
    'webhooks',
    'sharedSecret',
    'subscription',
    'filters',
    'mapping',
    'method',
    'batching',
    'autoDisable',
    'maxRequestsPerSecond',
    'signing',
    'standardWebhooksSecret',
  ])

  const webhooks =
    input.webhooks === undefined && current
      ? current.webhooks
      : validateWebhooks(input.webhooks, `${field}/webhooks`)
  const sharedSecret =
    input.sharedSecret === undefined
      ? (current?.sharedSecret ?? null)
      : validateSharedSecret(input.sharedSecret, `${field}/sharedSecret`)
  const settings: WebhooksSettings = { webhooks, sharedSecret }
  // Each optional setting: omitted keeps the current value, null removes it. Unset ones are left out of
  // the stored settings altogether, so a destination without them reads back exactly as before.
  const subscription = optional(input.subscription, current?.subscription, (value) =>
    validateSubscription(value, `${field}/subscription`),
  )
  if (subscription !== undefined) settings.subscription = subscription
  const filters = optional(input.filters, current?.filters, (value) =>
    validateFilters(value, `${field}/filters`),
  )
  if (filters !== undefined) settings.filters = filters
  const mapping = optional(input.mapping, current?.mapping, (value) =>
    validateMapping(value, `${field}/mapping`),
  )
  if (mapping !== undefined) settings.mapping = mapping
  const method = optional(input.method, current?.method, (value) => validateMethod(value, `${field}/method`))
  if (method !== undefined && method !== 'POST') settings.method = method
  const batching =
    input.batching === undefined ? current?.batching : validateBatching(input.batching, `${field}/batching`)
  if (batching !== undefined) settings.batching = batching
  const autoDisable = optional(input.autoDisable, current?.autoDisable, (value) =>
    validateAutoDisable(value, `${field}/autoDisable`),
  )
  if (autoDisable !== undefined) settings.autoDisable = autoDisable
  const maxRequestsPerSecond = optional(input.maxRequestsPerSecond, current?.maxRequestsPerSecond, (value) =>
    validateRate(value, `${field}/maxRequestsPerSecond`),
  )
  if (maxRequestsPerSecond !== undefined) settings.maxRequestsPerSecond = maxRequestsPerSecond
  const signing =
    input.signing === undefined
      ? current?.signing
      : validateSigning(input.signing, current?.signing, `${field}/signing`)
  if (signing !== undefined) settings.signing = signing
  let whsec =
    input.standardWebhooksSecret === undefined
      ? current?.standardWebhooksSecret
      : validateStandardWebhooksSecret(input.standardWebhooksSecret, `${field}/standardWebhooksSecret`)
  // Turning Standard Webhooks on without a secret: Sluice makes one (the API shows it once).
  if (whsec === undefined && signing?.standardWebhooks) whsec = newStandardWebhooksSecret()
  if (whsec !== undefined) settings.standardWebhooksSecret = whsec
  const rotation = keptRotation(current, settings)
  if (rotation !== undefined) settings.rotation = rotation
  return settings
}

/** The ranges of `settings.autoDisable.afterHours` and `settings.maxRequestsPerSecond`. */
export const HEALTH_LIMITS = {
  afterHours: { min: 1, max: 720 },
  maxRequestsPerSecond: { min: 0.1, max: 10_000 },
} as const

function validateAutoDisable(value: unknown, field: string): AutoDisableSettings {
  const { min, max } = HEALTH_LIMITS.afterHours
  if (!isJsonObject(value)) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} must be an object such as {"afterHours": 24}, or null to turn auto-disabling off.`,
    )
  }
  refuseUnknownMembers(value, field, ['afterHours'])
  const hours = value.afterHours
  if (typeof hours !== 'number' || !Number.isInteger(hours) || hours < min || hours > max) {
    throw new ValidationError(
      `${field}/afterHours`,
      `${fieldLabel(`${field}/afterHours`)} is ${JSON.stringify(hours) ?? 'missing'}; it must be a whole number of hours from ${min} to ${max}.`,
    )
  }
  return { afterHours: hours }
}

function validateRate(value: unknown, field: string): number {
  const { min, max } = HEALTH_LIMITS.maxRequestsPerSecond
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} is ${JSON.stringify(value)}; it must be a number of requests per second from ${min} to ${max}, or null for no cap.`,
    )
  }
  return value
}

/**
 * Partial input merges into the current signing (or the defaults); `null` resets the defaults. Stored
 * only when it differs from the defaults, so a destination that never set it reads back as before.
 */
function validateSigning(
  value: unknown,
  current: SigningSettings | undefined,
  field: string,
): SigningSettings | undefined {
  if (value === null) return undefined
  if (!isJsonObject(value)) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} must be an object such as {"xSignature": true, "standardWebhooks": true}, or null for the defaults.`,
    )
  }
  refuseUnknownMembers(value, field, Object.keys(DEFAULT_SIGNING))
  const signing = { ...(current ?? DEFAULT_SIGNING) }
  for (const name of Object.keys(DEFAULT_SIGNING) as (keyof SigningSettings)[]) {
    const member = value[name]
    if (member === undefined) continue
    if (typeof member !== 'boolean') {
      throw new ValidationError(
        `${field}/${name}`,
        `${fieldLabel(`${field}/${name}`)} must be true or false.`,
      )
    }
    signing[name] = member
  }
  const isDefault = (Object.keys(DEFAULT_SIGNING) as (keyof SigningSettings)[]).every(
    (name) => signing[name] === DEFAULT_SIGNING[name],
  )
  return isDefault ? undefined : signing
}

/** `null` removes it (a new one is made if Standard Webhooks is on). Never quotes the secret. */
export function validateStandardWebhooksSecret(value: unknown, field: string): string | undefined {
  if (value === null) return undefined
  if (typeof value !== 'string') {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} must be a string such as "whsec_" followed by base64, or null to have Sluice make a new one.`,
    )
  }
  const problem = standardWebhooksSecretProblem(value)
  if (problem !== undefined) throw new ValidationError(field, `${fieldLabel(field)} ${problem}`)
  return value
}

/**
 * The rotation state the new settings keep: the rotations listed, and each replaced secret still in its
 * grace only while the secret that replaced it is unchanged (setting a secret directly ends the grace).
 */
function keptRotation(
  current: WebhooksSettings | undefined,
  next: WebhooksSettings,
): RotationState | undefined {
  const rotation = current?.rotation
  if (rotation === undefined) return undefined
  const previous: RotationState['previous'] = {}
  const { sharedSecret, standardWebhooks } = rotation.previous
  if (sharedSecret !== undefined && next.sharedSecret === current?.sharedSecret && next.sharedSecret !== null)
    previous.sharedSecret = sharedSecret
  if (standardWebhooks !== undefined && next.standardWebhooksSecret === current?.standardWebhooksSecret)
    previous.standardWebhooks = standardWebhooks
  return { previous, rotations: rotation.rotations }
}

function optional<T>(value: unknown, current: T | undefined, validate: (value: unknown) => T): T | undefined {
  if (value === undefined) return current
  if (value === null) return undefined
  return validate(value)
}

/** A subscription in Segment's syntax; the error names the character position. */
export function validateSubscription(value: unknown, field: string): string {
  if (typeof value !== 'string') {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} must be a string in Segment's subscription syntax, e.g. "type = "track" and event = "Order Completed"", or null to remove it.`,
    )
  }
  try {
    checkSubscription(value)
  } catch (error) {
    if (!(error instanceof SubscriptionSyntaxError)) throw error
    throw new ValidationError(
      field,
      `${fieldLabel(field)} is not valid subscription syntax. ${error.message}`,
    )
  }
  return value
}

function validateFilters(value: unknown, field: string): DestinationFilter[] {
  if (!Array.isArray(value)) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} must be a list of rules such as {"action": "drop", "if": "event = "Test""}, or null to remove them.`,
    )
  }
  if (value.length > FILTER_LIMITS.maxFilters) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} has ${value.length} rules; at most ${FILTER_LIMITS.maxFilters} are allowed. Merge some with "or" in their "if".`,
    )
  }
  return value.map((rule, index) => validateFilter(rule, `${field}/${index}`))
}

function validateFilter(value: unknown, field: string): DestinationFilter {
  if (!isJsonObject(value)) {
    throw new ValidationError(field, `${fieldLabel(field)} must be an object such as {"action": "drop"}.`)
  }
  refuseUnknownMembers(value, field, ['if', 'action', 'percent', 'fields'])
  const action = value.action
  if (typeof action !== 'string' || !(FILTER_ACTIONS as readonly string[]).includes(action)) {
    throw new ValidationError(
      `${field}/action`,
      `${fieldLabel(`${field}/action`)} must be one of ${FILTER_ACTIONS.join(', ')}.`,
    )
  }
  const filter: DestinationFilter = { action: action as DestinationFilter['action'] }
  if (value.if !== undefined && value.if !== null) filter.if = validateSubscription(value.if, `${field}/if`)
  if (action === 'sample') {
    const percent = value.percent
    if (typeof percent !== 'number' || !Number.isFinite(percent) || percent < 0 || percent > 100) {
      throw new ValidationError(
        `${field}/percent`,
        `${fieldLabel(`${field}/percent`)} is required for "sample": the share of calls kept, a number from 0 to 100.`,
      )
    }
    filter.percent = percent
  } else if (value.percent !== undefined) {
    throw new ValidationError(`${field}/percent`, `"percent" only applies to the "sample" action; remove it.`)
  }
  if (action === 'dropFields' || action === 'allowFields') {
    filter.fields = validateFieldPaths(value.fields, `${field}/fields`)
  } else if (value.fields !== undefined) {
    throw new ValidationError(
      `${field}/fields`,
      `"fields" only applies to the "dropFields" and "allowFields" actions; remove it.`,
    )
  }
  return filter
}

const FIELD_PATH = /^[^.\s]+(\.[^.\s]+)*$/

function validateFieldPaths(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > FILTER_LIMITS.maxFields) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} must list 1 to ${FILTER_LIMITS.maxFields} dot paths such as "properties.email" or "context.ip".`,
    )
  }
  return value.map((path, index) => {
    if (typeof path !== 'string' || path.length > FILTER_LIMITS.maxPathLength || !FIELD_PATH.test(path)) {
      throw new ValidationError(
        `${field}/${index}`,
        `${fieldLabel(`${field}/${index}`)} must be a dot path such as "properties.email" (no spaces, no empty segments, at most ${FILTER_LIMITS.maxPathLength} characters).`,
      )
    }
    return path
  })
}

function validateMapping(value: unknown, field: string): Record<string, unknown> {
  try {
    checkMapping(value)
    return value
  } catch (error) {
    if (!(error instanceof MappingError)) throw error
    const at = `${field}${error.pointer}`
    throw new ValidationError(at, `${fieldLabel(at)}: ${error.message}`)
  }
}

function validateMethod(value: unknown, field: string): WebhookMethod {
  if (typeof value !== 'string' || !(WEBHOOK_METHODS as readonly string[]).includes(value)) {
    throw new ValidationError(field, `${fieldLabel(field)} must be one of ${WEBHOOK_METHODS.join(', ')}.`)
  }
  return value as WebhookMethod
}

/** `null` turns batching off (one message per request again). */
function validateBatching(value: unknown, field: string): BatchingSettings | undefined {
  if (value === null) return undefined
  const example = '{"maxEvents": 100, "maxBytes": 512000, "maxWaitMs": 1000}'
  if (!isJsonObject(value)) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} must be an object such as ${example}, or null to send one message per request.`,
    )
  }
  refuseUnknownMembers(value, field, Object.keys(BATCHING_LIMITS))
  const limit = (name: keyof typeof BATCHING_LIMITS): number => {
    const { min, max } = BATCHING_LIMITS[name]
    const member = value[name]
    const memberField = `${field}/${name}`
    if (member === undefined) {
      throw new ValidationError(
        memberField,
        `${fieldLabel(memberField)} is required: a whole number from ${min} to ${max}, as in ${example}.`,
      )
    }
    if (typeof member !== 'number' || !Number.isInteger(member) || member < min || member > max) {
      throw new ValidationError(
        memberField,
        `${fieldLabel(memberField)} is ${JSON.stringify(member)}; it must be a whole number from ${min} to ${max}.`,
      )
    }
    return member
  }
  return { maxEvents: limit('maxEvents'), maxBytes: limit('maxBytes'), maxWaitMs: limit('maxWaitMs') }
}

function validateWebhooks(value: unknown, field: string): WebhookEndpoint[] {
  const { minUrls, maxUrls } = WEBHOOKS_LIMITS
  if (!Array.isArray(value)) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} is required: a list of ${minUrls} to ${maxUrls} entries such as {"url": "https://example.com/hooks"}.`,
    )
  }
  if (value.length < minUrls) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} is empty; add at least ${minUrls} URL to deliver to.`,
    )
  }
  if (value.length > maxUrls) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} has ${value.length} entries; a Webhooks destination allows at most ${maxUrls}. Remove some, or create another destination.`,
    )
  }

  const seenUrls = new Map<string, number>()
  return value.map((entry, index) => {
    const entryField = `${field}/${index}`
    if (!isJsonObject(entry)) {
      throw new ValidationError(
        entryField,
        `${fieldLabel(entryField)} must be an object such as {"url": "https://example.com/hooks"}.`,
      )
    }
    refuseUnknownMembers(entry, entryField, ['url', 'headers'])
    const url = validateUrl(entry.url, `${entryField}/url`)
    const earlier = seenUrls.get(url)
    if (earlier !== undefined) {
      throw new ValidationError(
        `${entryField}/url`,
        `${fieldLabel(`${entryField}/url`)} repeats the URL of ${fieldLabel(`${field}/${earlier}/url`)}; each URL may appear once.`,
      )
    }
    seenUrls.set(url, index)
    return { url, headers: validateHeaders(entry.headers, `${entryField}/headers`) }
  })
}

/** An absolute http(s) URL without credentials; throws `ValidationError` at `field`. */
export function validateUrl(value: unknown, field: string): string {
  const example = 'e.g. https://example.com/hooks'
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} is required: an absolute http:// or https:// URL, ${example}.`,
    )
  }
  const url = value.trim()
  if (url.length > WEBHOOKS_LIMITS.maxUrlLength) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} is ${url.length} characters long; at most ${WEBHOOKS_LIMITS.maxUrlLength} are allowed.`,
    )
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase()
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} uses the ${scheme}: scheme; only http:// and https:// URLs are supported.`,
    )
  }
  // Requiring the "//" refuses relative URLs and WHATWG's lenient forms such as "https:example.com".
  if (!/^https?:\/\//i.test(url) || !URL.canParse(url)) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} is not an absolute URL; write it in full with http:// or https:// and a host name, ${example}.`,
    )
  }
  const parsed = new URL(url)
  if (parsed.username !== '' || parsed.password !== '') {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} contains credentials (user:password@); remove them and send them as a static header such as Authorization instead.`,
    )
  }
  return url
}

function validateHeaders(value: unknown, field: string): Record<string, string> {
  if (value === undefined || value === null) return {}
  if (!isJsonObject(value)) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} must be an object of header names to string values, e.g. {"Authorization": "Bearer abc"}.`,
    )
  }
  const names = Object.keys(value)
  if (names.length > WEBHOOKS_LIMITS.maxHeadersPerUrl) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} has ${names.length} headers; at most ${WEBHOOKS_LIMITS.maxHeadersPerUrl} are allowed per URL.`,
    )
  }

  const headers: Record<string, string> = {}
  const seenNames = new Map<string, string>()
  for (const name of names) {
    const headerField = `${field}/${escapePointerToken(name)}`
    if (name.length > WEBHOOKS_LIMITS.maxHeaderNameLength || !HEADER_NAME_PATTERN.test(name)) {
      throw new ValidationError(
        headerField,
        `Header name ${JSON.stringify(name.slice(0, 64))} in ${fieldLabel(field)} is not a legal HTTP header name: use 1 to ${WEBHOOKS_LIMITS.maxHeaderNameLength} letters, digits and !#$%&'*+-.^_\`|~ (no spaces or colons).`,
      )
    }
    const lowerName = name.toLowerCase()
    if (RESERVED_LOWER_CASE.has(lowerName)) {
      throw new ValidationError(
        headerField,
        `Header "${name}" in ${fieldLabel(field)} is set by Sluice or by the HTTP connection and cannot be configured; remove it. Reserved (any case): ${RESERVED_HEADER_NAMES.join(', ')}.`,
      )
    }
    const earlier = seenNames.get(lowerName)
    if (earlier !== undefined) {
      throw new ValidationError(
        headerField,
        `Header "${name}" in ${fieldLabel(field)} repeats "${earlier}" (header names ignore case); keep one of them.`,
      )
    }
    seenNames.set(lowerName, name)
    headers[name] = validateHeaderValue(value[name], name, headerField)
  }
  return headers
}

function validateHeaderValue(value: unknown, name: string, field: string): string {
  if (typeof value !== 'string') {
    throw new ValidationError(field, `The value of header "${name}" must be a string.`)
  }
  // CR, LF and NUL first and by name: they are how a value would smuggle extra headers in.
  if (/[\r\n\0]/.test(value)) {
    throw new ValidationError(
      field,
      `The value of header "${name}" contains a line break or NUL character (CR, LF or NUL); remove it.`,
    )
  }
  const trimmed = value.trim()
  for (const char of trimmed) {
    const code = char.codePointAt(0) ?? 0
    if (code !== 0x09 && (code < 0x20 || code > 0x7e)) {
      throw new ValidationError(
        field,
        `The value of header "${name}" contains a control or non-ASCII character; use printable ASCII only (encode other text, e.g. percent-encoding).`,
      )
    }
  }
  if (trimmed.length > WEBHOOKS_LIMITS.maxHeaderValueBytes) {
    throw new ValidationError(
      field,
      `The value of header "${name}" is ${trimmed.length} bytes long; at most ${WEBHOOKS_LIMITS.maxHeaderValueBytes} bytes are allowed.`,
    )
  }
  return trimmed
}

/** Never quotes the secret: error messages are shown and logged. */
export function validateSharedSecret(value: unknown, field: string): string | null {
  if (value === null) return null
  if (typeof value !== 'string') {
    throw new ValidationError(field, `${fieldLabel(field)} must be a string, or null to remove the secret.`)
  }
  if (value === '') {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} is empty; send null to remove the secret, or a non-empty string.`,
    )
  }
  const bytes = Buffer.byteLength(value, 'utf8')
  if (bytes > WEBHOOKS_LIMITS.maxSecretBytes) {
    throw new ValidationError(
      field,
      `${fieldLabel(field)} is ${bytes} bytes long; at most ${WEBHOOKS_LIMITS.maxSecretBytes} bytes are allowed.`,
    )
  }
  return value
}

function refuseUnknownMembers(
  object: Record<string, unknown>,
  field: string,
  allowed: readonly string[],
): void {
  const unknown = Object.keys(object).find((key) => !allowed.includes(key))
  if (unknown !== undefined) {
    throw new ValidationError(
      `${field}/${unknown}`,
      `Unknown property "${unknown}" in ${fieldLabel(field)}; allowed: ${allowed.join(', ')}.`,
    )
  }
}
