// One computation whose result cannot be stored fails alone, on every backend: it becomes `failed`
// with the store's error, and every other computation, profile and later call is evaluated as usual.
// The store's refusal is real: a trigger on computed_values refuses that computation's rows.
import assert from 'node:assert/strict'
import { describe } from 'node:test'
import type { NewComputedTrait } from '../../src/domain/profile-store.ts'
import { backends, call, profileTest, settle } from './profile-backends.ts'

function trait(key: string, overrides: Partial<NewComputedTrait> = {}): NewComputedTrait {
  return {
    name: key,
    key,
    kind: 'count',
    event: 'E',
    property: null,
    where: [],
    withinDays: null,
    destinationIds: [],
    ...overrides,
  }
}

function refuseValuesOf(backend: string, computationId: string): string {
  if (backend === 'postgres') {
    return `CREATE FUNCTION refuse_values() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
      CREATE TRIGGER refuse_values BEFORE INSERT OR UPDATE ON computed_values
      FOR EACH ROW WHEN (NEW.computation_id = '${computationId}') EXECUTE FUNCTION refuse_values();`
  }
  return `CREATE TRIGGER refuse_values BEFORE INSERT ON computed_values
    WHEN NEW.computation_id = '${computationId}' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`
}

for (const backend of backends) {
  describe(`one bad computation: ${backend.name}`, () => {
    profileTest(
      backend,
      'a value the store refuses fails its computation alone',
      async (opened, web, hook) => {
        const { store } = opened
        await store.ingest([call(web, { userId: 'r1', event: 'E', properties: { plan: 'pro' } })])
        const bad = (await store.createComputedTrait(trait('bad')))!
        await opened.beside(refuseValuesOf(backend.name, bad.id))
        const good = (await store.createComputedTrait(trait('good', { destinationIds: [hook.id] })))!
        const audience = (await store.createAudience({
          name: 'Buyers',
          key: 'buyers',
          definition: { event: 'E' },
          includeAnonymous: false,
          destinationIds: [],
        }))!
        await settle(store)
        const failed = await store.getComputedTrait(bad.id)
        assert.equal(failed?.status, 'failed')
        assert.match(failed?.error ?? '', /could not be stored: .*refused by the test/)
        assert.equal((await store.getComputedTrait(good.id))?.status, 'live')
        assert.equal((await store.getAudience(audience.id))?.status, 'live')
        assert.deepEqual((await store.findProfile({ userId: 'r1' }))?.computedTraits, { good: 1 })
        assert.deepEqual((await store.findProfile({ userId: 'r1' }))?.audiences, ['buyers'])

        // Later calls and profiles go on being evaluated.
        await store.ingest([call(web, { userId: 'r2', event: 'E' }), call(web, { userId: 'r1', event: 'E' })])
        await settle(store)
        assert.deepEqual((await store.findProfile({ userId: 'r2' }))?.computedTraits, { good: 1 })
        assert.deepEqual((await store.findProfile({ userId: 'r1' }))?.computedTraits, { good: 2 })
      },
    )

    profileTest(
      backend,
      'a trait reading an inherited name is live with no value',
      async ({ store }, web) => {
        await store.ingest([call(web, { userId: 'r1', event: 'E' })])
        const ctor = (await store.createComputedTrait(
          trait('last_ctor', { kind: 'last', property: 'constructor' }),
        ))!
        const later = (await store.createComputedTrait(trait('later')))!
        await settle(store)
        assert.equal((await store.getComputedTrait(ctor.id))?.status, 'live')
        assert.equal((await store.getComputedTrait(later.id))?.status, 'live')
        assert.deepEqual((await store.findProfile({ userId: 'r1' }))?.computedTraits, { later: 1 })
      },
    )
  })
}
