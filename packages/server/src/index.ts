/**
 * The public entry of `@sluice/server`: start a Sluice in-process, open its store, verify signatures,
 * and the types of what it stores. Everything else is internal and may change.
 */
export { createSluice, type Sluice } from './app/server.ts'
export { type Config, loadConfig } from './config.ts'
export { signBody, verifySignature } from './deliver/signing.ts'
export type * from './domain/deliveries.ts'
export type * from './domain/delivery-store.ts'
export type * from './domain/destinations.ts'
export type * from './domain/message-store.ts'
export type * from './domain/messages.ts'
export type * from './domain/privacy-store.ts'
export type * from './domain/profile-store.ts'
export type * from './domain/series-store.ts'
export type * from './domain/source-store.ts'
export type * from './domain/sources.ts'
export type * from './domain/token-store.ts'
export { openStore } from './store/open.ts'
export type * from './store/store.ts'
