/**
 * Generated Segment calls and subscriptions for the differential tests (fast-check, fixed seeds so a
 * failure repeats). Values come from small sets so that subscriptions match some calls and not others.
 */
import fc from 'fast-check'

export const EVENTS = [
  'Order Completed',
  'Product Added',
  'Nike Shoes Viewed',
  'Signed Up',
  'order completed',
]
const PLANS = ['pro', 'free', 'enterprise']

const properties = fc.record(
  {
    total: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.constant('120')),
    plan: fc.constantFrom(...PLANS),
    email: fc.constantFrom('a@example.com', 'b@example.com'),
    sku: fc.constantFrom('SKU-1', 'NIKE-9', 'X'),
    items: fc.array(fc.record({ sku: fc.constantFrom('A', 'B'), price: fc.integer({ min: 1, max: 50 }) }), {
      maxLength: 3,
    }),
    p: fc.constantFrom('$.event', '$.userId'),
    flag: fc.boolean(),
  },
  { requiredKeys: [] },
)

const traits = fc.record(
  {
    plan: fc.constantFrom(...PLANS),
    logins: fc.integer({ min: 0, max: 20 }),
    name: fc.constantFrom('Ada', 'Bo'),
  },
  { requiredKeys: [] },
)

const identity = fc.oneof(
  fc.record({ userId: fc.constantFrom('user-1', 'user-2', 'user-3') }),
  fc.record({ anonymousId: fc.constantFrom('anon-1', 'anon-2') }),
  fc.record({ userId: fc.constantFrom('user-1', 'user-2'), anonymousId: fc.constant('anon-3') }),
)

const context = fc.record(
  { ip: fc.constantFrom('10.0.0.1', '10.0.0.2'), locale: fc.constantFrom('en-US', 'fr-FR') },
  {
    requiredKeys: [],
  },
)

/** A valid call of any of the five user-facing types (alias left out: it has no properties or traits). */
export const callArbitrary = fc
  .oneof(
    fc.record({
      type: fc.constant('track'),
      event: fc.constantFrom(...EVENTS),
      properties,
      identity,
      context,
    }),
    fc.record({ type: fc.constant('identify'), traits, identity, context }),
    fc.record({
      type: fc.constant('page'),
      name: fc.constantFrom('Home', 'Checkout'),
      properties,
      identity,
      context,
    }),
    fc.record({
      type: fc.constant('screen'),
      name: fc.constantFrom('Home', 'Cart'),
      properties,
      identity,
      context,
    }),
    fc.record({
      type: fc.constant('group'),
      groupId: fc.constantFrom('g-1', 'g-2'),
      traits,
      identity,
      context,
    }),
  )
  .map(({ identity: who, ...call }) => ({ ...call, ...who }) as Record<string, unknown>)

/** `count` calls from a fixed seed, each with a unique messageId. */
export function generatedCalls(count: number, seed: number): Record<string, unknown>[] {
  return fc
    .sample(callArbitrary, { numRuns: count, seed })
    .map((call, index) => ({ ...call, messageId: `gen-${seed}-${index}` }))
}

const quoted = (text: string) => JSON.stringify(text)

const condition = fc.oneof(
  fc.constantFrom('track', 'identify', 'page', 'screen', 'group').map((type) => `type = ${quoted(type)}`),
  fc.constantFrom(...EVENTS).map((event) => `event = ${quoted(event)}`),
  fc.constantFrom(...EVENTS).map((event) => `event != ${quoted(event)}`),
  fc
    .tuple(fc.constantFrom('>', '>=', '<', '<=', '=', '!='), fc.integer({ min: 0, max: 300 }))
    .map(([op, n]) => `properties.total ${op} ${n}`),
  fc.constantFrom(...PLANS).map((plan) => `traits.plan = ${quoted(plan)}`),
  fc.constantFrom(...PLANS).map((plan) => `properties.plan != ${quoted(plan)}`),
  fc.constantFrom('Nike', 'Order', 'order').map((part) => `contains(event, ${quoted(part)})`),
  fc.constantFrom('Nike', 'Order').map((part) => `!contains(event, ${quoted(part)})`),
  fc.constantFrom('Order*', '*Added', 'Sign*').map((pattern) => `match(event, ${quoted(pattern)})`),
  fc.constantFrom('userId != null', 'userId = null', 'properties.email != null', 'traits.name = null'),
  fc.constantFrom('properties.flag = true', 'properties.flag = false'),
  fc.constantFrom('name = "Home"', 'context.ip = "10.0.0.1"', 'traits.logins >= 10'),
)

const group = fc
  .tuple(fc.array(condition, { minLength: 1, maxLength: 3 }), fc.constantFrom('and', 'or'))
  .map(([parts, joiner]) => parts.join(` ${joiner} `))

/** A subscription of one or more conditions, possibly with one level of parenthesised groups. */
export const subscriptionArbitrary = fc.oneof(
  group,
  fc
    .tuple(fc.array(group, { minLength: 2, maxLength: 3 }), fc.constantFrom('and', 'or'))
    .map(([groups, joiner]) => groups.map((each) => `(${each})`).join(` ${joiner} `)),
)

export function generatedSubscriptions(count: number, seed: number): string[] {
  return fc.sample(subscriptionArbitrary, { numRuns: count, seed })
}
