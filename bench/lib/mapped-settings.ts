// The delivery settings the subscriptions benchmark measures: a subscription that every backlog call
// (bench/lib/backlog-messages.ts) matches, and a mapping of ten fields using most directives.

export const MAPPED_SETTINGS = {
  subscription: 'type = "track" and (event = "Order Completed" or properties.total >= 100)',
  mapping: {
    event: { '@path': '$.event' },
    user: { '@path': '$.userId' },
    total: { '@path': '$.properties.total' },
    currency: { '@case': { operator: 'lower', value: { '@path': '$.properties.currency' } } },
    summary: { '@template': '{{userId}} bought {{properties.items}} items' },
    // biome-ignore lint/suspicious/noThenProperty: `then` is the mapping language's own word for @if.
    ip: { '@if': { exists: { '@path': '$.context.ip' }, then: { '@path': '$.context.ip' }, else: null } },
    library: { '@path': '$.context.library.name' },
    source: { '@literal': 'sluice' },
    slug: { '@replace': { pattern: ' ', replacement: '_', global: true, value: { '@path': '$.event' } } },
    id: { '@path': '$.messageId' },
  },
}
