/**
 * The settings documents browser SDKs load before they send anything (docs/tracking-api.md#browser-sdks):
 * Segment's analytics.js reads `GET /v1/projects/:writeKey/settings` from its CDN, RudderStack's SDK
 * reads `GET /sourceConfig` from its control plane. Sluice answers both for its own sources, so that
 * pointing either SDK at Sluice is all a website has to change. Each document holds only what the SDK
 * needs to send its calls here: no device-mode destinations, no remote plugins, no metrics.
 */
import type { Source } from '../domain/sources.ts'
import { HttpError } from '../lib/errors.ts'

/**
 * The base URL browsers reach this Sluice at, without a trailing slash: `SLUICE_PUBLIC_URL` when set,
 * else the scheme and host of the request (which, with `SLUICE_TRUST_PROXY`, are the ones the proxy in
 * front saw).
 */
export function publicBaseUrl(configured: string | undefined, protocol: string, host: string): URL {
  if (configured) return new URL(configured)
  // The Host header is the client's word: use it only when it is a plain host[:port].
  if (HOST_AND_PORT.test(host)) {
    try {
      return new URL(`${protocol === 'https' ? 'https' : 'http'}://${host}`)
    } catch {
      // A port over 65535: refused below like any other malformed host.
    }
  }
  throw new HttpError(
    400,
    'invalid_host',
    `The Host header "${host.slice(0, 100)}" is not a host name; set SLUICE_PUBLIC_URL to the URL browsers reach Sluice at.`,
  )
}

/** A DNS name or IPv4 address, or an IPv6 address in brackets, with an optional port. */
const HOST_AND_PORT =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/

/** `https://example.com/sluice` → `example.com/sluice`: a URL without its scheme or trailing slash. */
function hostAndPath(base: URL): string {
  return `${base.host}${base.pathname.replace(/\/+$/, '')}`
}

/**
 * The CDN settings document analytics.js (`@segment/analytics-next`) loads. Its "Segment.io" integration
 * is the SDK's own delivery: `apiHost` and `protocol` send every call back to this Sluice, at
 * `{apiHost}/t`, `/p`, `/i`, `/g`, `/a`, `/s`, and `/b` for batches.
 */
export function segmentSettings(source: Source, base: URL): Record<string, unknown> {
  return {
    integrations: {
      'Segment.io': {
        apiKey: source.writeKey,
        apiHost: `${hostAndPath(base)}/v1`,
        protocol: base.protocol === 'https:' ? 'https' : 'http',
        // The bundled/unbundled lists describe Segment's device-mode bundles, which Sluice has none of.
        addBundledMetadata: false,
        unbundledIntegrations: [],
        maybeBundledConfigIds: {},
      },
    },
    remotePlugins: [],
    enabledMiddleware: {},
    middlewareSettings: {},
    legacyVideoPluginsEnabled: false,
    // analytics.js reports its own health to Segment unless the sample rate is 0.
    metrics: { sampleRate: 0 },
  }
}

/**
 * The source configuration RudderStack's JavaScript SDK (`@rudderstack/analytics-js`) loads. The SDK
 * checks `source.id`, `source.config` and `source.destinations`; a source with `enabled: false` makes
 * it stop before sending anything. Its calls go to the data plane URL it was loaded with.
 */
export function rudderSourceConfig(source: Source): Record<string, unknown> {
  return {
    isHosted: false,
    source: {
      id: source.id,
      name: source.name,
      writeKey: source.writeKey,
      enabled: source.enabled,
      workspaceId: 'sluice',
      // No error reports or metrics to RudderStack's services.
      config: { statsCollection: { errors: { enabled: false }, metrics: { enabled: false } } },
      // Device-mode destinations would be loaded into the page from RudderStack's CDN; Sluice has none.
      destinations: [],
    },
  }
}
