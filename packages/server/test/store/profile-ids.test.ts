// New profile ids: `prf_` and 24 hex digits, unique, and in creation order (so the rows a batch writes
// for new profiles sit together in the indexes).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { newProfileId } from '../../src/profile/identity-resolution.ts'

test('profile ids are well formed, unique, and sort by creation time', () => {
  const start = Date.UTC(2026, 10, 23)
  const ids = Array.from({ length: 1_000 }, (_, i) => newProfileId(start + Math.floor(i / 10)))
  for (const id of ids) assert.match(id, /^prf_[0-9a-f]{24}$/)
  assert.equal(new Set(ids).size, ids.length)
  const times = ids.map((id) => Number.parseInt(id.slice(4, 16), 16))
  assert.deepEqual(
    times,
    ids.map((_, i) => start + Math.floor(i / 10)),
  )
  for (let i = 10; i < ids.length; i += 10)
    assert.ok(ids[i - 1]! < ids[i]!, 'a later millisecond sorts after')
})
