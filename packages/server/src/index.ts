export { createSluice, type Sluice } from './app/server.ts'
export { type Config, loadConfig } from './config.ts'
export type * from './store/store.ts'
