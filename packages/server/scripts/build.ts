// Builds the JavaScript that `npm start`, the `sluice` command and the container run (dist/): the
// TypeScript compiled as is, plus the SQL migrations the stores read at start-up. Nothing is left from
// an earlier build, so a deleted module can never still run. Tests run the TypeScript sources directly.
//   npm run build -w @sluice/server   (npm puts the repository's `tsc` on PATH)
import { execFileSync } from 'node:child_process'
import { cpSync, rmSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')
const dist = join(root, 'dist')
rmSync(dist, { recursive: true, force: true })
execFileSync('tsc', ['-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' })
for (const store of ['sqlite', 'postgres']) {
  cpSync(join(root, 'src/store', store, 'migrations'), join(dist, 'store', store, 'migrations'), {
    recursive: true,
  })
}
