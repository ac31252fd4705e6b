import react from '@vitejs/plugin-react'
import { defaultClientConditions, defineConfig } from 'vite'

// Built by the repository's `npm install` (root `prepare`); the Sluice server serves `dist/` at `/`.
export default defineConfig({
  plugins: [react()],
  // `@sluice/server/api` resolves to its TypeScript source, as in the typecheck (tsconfig.base.json's
  // customConditions). The app bundles only its pure constants, never the server's runtime.
  resolve: { conditions: ['@sluice/source', ...defaultClientConditions] },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 300,
    rolldownOptions: {
      // The server modules the app imports hold constants only. Said so, the bundler skips the API
      // module's re-exports instead of keeping it whole in the first chunk, where pages loaded later
      // would share it through an extra chunk of React and the UI kit.
      treeshake: { moduleSideEffects: (id) => !id.includes('/packages/server/src/') },
    },
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8080', '/v1': 'http://127.0.0.1:8080' } },
})
