/**
 * Every LIMIT taken from a parameter in the SQLite store is written `LIMIT +?`: SQLite re-prepares a
 * statement whose LIMIT is a bare parameter each time that parameter is bound (see `sql` in
 * store/sqlite/database.ts), which made every delivery claim parse and plan its statement again.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

const SQLITE_DIR = join(import.meta.dirname, '../../src/store/sqlite')

test('no SQLite statement has a bare parameter as its LIMIT', () => {
  const files = readdirSync(SQLITE_DIR, { recursive: true, encoding: 'utf8' }).filter((file) =>
    file.endsWith('.ts'),
  )
  assert.ok(files.length > 10)
  const bare = files.flatMap((file) =>
    readFileSync(join(SQLITE_DIR, file), 'utf8')
      .split('\n')
      .flatMap((line, index) => (/LIMIT\s+\?/i.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
  )
  assert.deepEqual(bare, [])
})
