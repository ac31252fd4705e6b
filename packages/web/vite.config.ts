import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

// Built by the repository's `npm install` (root `prepare`); the Sluice server serves `dist/` at `/`.
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 300 },
  server: { proxy: { '/api': 'http://127.0.0.1:8080', '/v1': 'http://127.0.0.1:8080' } },
})
