/**
 * Rotating a destination's signing secret without downtime (docs/webhooks.md): the new secret signs at
 * once, and the one it replaces keeps signing beside it until the grace period ends
 * (`webhook-signature: v1,<new> v1,<old>`; `X-Signature` old, `X-Signature-Next` new). The state lives
 * in the destination's settings, sealed at rest with them, and every process reads it from there; the
 * end of the grace is a time compared at each attempt, so nothing has to run when it passes.
 *
 * Decisions:
 * - Rotating again during a grace replaces the secret in grace by the one being replaced: receivers
 *   only ever need the newest two.
 * - Rotating a kind that has no secret yet just sets one (there is nothing to overlap with).
 * - A given secret equal to the current one is refused: it would rotate nothing.
 */

import { newSecretToken } from '../lib/ids.ts'
import { fieldLabel } from '../lib/json-pointer.ts'
import { newStandardWebhooksSecret } from '../lib/standard-webhooks-secret.ts'
import {
  GRACE_PERIOD_SECONDS,
  SECRET_KINDS,
  type SecretKind,
  type SecretRotation,
  type WebhooksSettings,
} from './destinations.ts'
import { ValidationError } from './errors.ts'
import { validateSharedSecret, validateStandardWebhooksSecret } from './webhook-settings.ts'

/** Rotations kept in the list, newest; older ones are forgotten. */
export const MAX_LISTED_ROTATIONS = 50

export interface RotationRequest {
  kind: unknown
  gracePeriodSeconds?: unknown
  /** The new secret; made by Sluice when left out. */
  secret?: unknown
}

export interface Rotated {
  settings: WebhooksSettings
  /** The new secret, shown this once. */
  secret: string
  rotation: SecretRotation
}

/** The settings after rotating `request.kind` at `now`. Throws `ValidationError` naming the field. */
export function rotateSecret(settings: WebhooksSettings, request: RotationRequest, now: number): Rotated {
  const kind = validateKind(request.kind)
  const graceSeconds = validateGrace(request.gracePeriodSeconds)
  const given =
    request.secret === undefined || request.secret === null
      ? undefined
      : kind === 'standardWebhooks'
        ? validateStandardWebhooksSecret(request.secret, '/secret')
        : validateSharedSecret(request.secret, '/secret')
  const current = kind === 'standardWebhooks' ? settings.standardWebhooksSecret : settings.sharedSecret
  if (given !== undefined && given === current) {
    throw new ValidationError(
      '/secret',
      'secret is the current secret; give a different one, or leave it out to have Sluice make one.',
    )
  }
  const secret = given ?? (kind === 'standardWebhooks' ? newStandardWebhooksSecret() : newSecretToken())
  const graceEndsAt = current ? now + graceSeconds * 1000 : now
  const previous = { ...settings.rotation?.previous }
  if (current && graceSeconds > 0) previous[kind] = { secret: current, until: graceEndsAt }
  else delete previous[kind]
  const rotation: SecretRotation = { kind, rotatedAt: now, graceEndsAt }
  const rotations = [...(settings.rotation?.rotations ?? []), rotation].slice(-MAX_LISTED_ROTATIONS)
  const next: WebhooksSettings = { ...settings, rotation: { previous, rotations } }
  if (kind === 'standardWebhooks') next.standardWebhooksSecret = secret
  else next.sharedSecret = secret
  return { settings: next, secret, rotation }
}

/** The rotations made, newest first. */
export function rotationsOf(settings: WebhooksSettings): SecretRotation[] {
  return [...(settings.rotation?.rotations ?? [])].reverse()
}

function validateKind(value: unknown): SecretKind {
  if (typeof value !== 'string' || !(SECRET_KINDS as readonly string[]).includes(value)) {
    throw new ValidationError(
      '/kind',
      `${fieldLabel('/kind')} must be ${SECRET_KINDS.map((kind) => `"${kind}"`).join(' or ')}: which secret to rotate.`,
    )
  }
  return value as SecretKind
}

function validateGrace(value: unknown): number {
  if (value === undefined) return GRACE_PERIOD_SECONDS.default
  const { min, max } = GRACE_PERIOD_SECONDS
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ValidationError(
      '/gracePeriodSeconds',
      `${fieldLabel('/gracePeriodSeconds')} is ${JSON.stringify(value)}; it must be a whole number of seconds from ${min} to ${max} (7 days), default ${GRACE_PERIOD_SECONDS.default} (one day).`,
    )
  }
  return value
}
