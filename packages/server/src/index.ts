export { createSluice, type Sluice } from './app/server.ts'
export { type Config, loadConfig } from './config.ts'
export { signBody, verifySignature } from './deliver/signing.ts'
export type * from './store/store.ts'
