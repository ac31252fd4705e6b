/**
 * What Sluice uses of node:http, taken without an ESM import of it. An `import … from 'node:http'`
 * reads every export of the module, and three of them (WebSocket, CloseEvent and MessageEvent) are
 * getters that load Node's bundled copy of undici: ~13 MB more resident in a bare Node process, for
 * classes Sluice never uses (its deliveries use the undici package). `process.getBuiltinModule` hands
 * over the module without reading them. Type-only imports of node:http are fine: they are erased.
 */
export const { STATUS_CODES, createServer } = process.getBuiltinModule('node:http')
