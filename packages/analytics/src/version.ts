/** Sent as `context.library` on every message; a test keeps `version` equal to package.json's. */
export const LIBRARY = Object.freeze({ name: '@sluice/analytics', version: '0.1.0' })
