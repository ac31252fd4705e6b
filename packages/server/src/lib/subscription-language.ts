/**
 * A destination's subscription: which calls it gets, written in Segment's subscription syntax (the
 * Actions "trigger"), e.g. `type = "track" and (event = "Order Completed" or event = "Product Added")`.
 * Parsed and evaluated by Segment's own implementation (`@segment/destination-subscriptions`), so a
 * trigger copied from Segment selects the same calls here.
 *
 * That parser is lenient: it turns some broken input into a condition that silently means something
 * else (`type = ` compares with the word "eos"; `a and b or c` takes the last operator for the whole
 * group; a value list `in [...]` compares with "["), and throws on a nested group. So before handing
 * the text over, `checkSubscription` reads the lexer's tokens with the grammar the parser actually
 * implements and refuses anything else, naming the character position of the first offending token.
 */

import { createRequire } from 'node:module'
import type * as Subscriptions from '@segment/destination-subscriptions'
import type * as Fql from '@segment/fql-ts'

interface SegmentParsers {
  parseFql: typeof Subscriptions.parseFql
  validate: typeof Subscriptions.validate
  lex: typeof Fql.lex
}
let parsers: SegmentParsers | undefined
/** Segment's packages, loaded on first use: a process with no subscription never pays their memory. */
function segment(): SegmentParsers {
  if (parsers === undefined) {
    const require = createRequire(import.meta.url)
    const { parseFql, validate } = require('@segment/destination-subscriptions') as typeof Subscriptions
    const { lex } = require('@segment/fql-ts') as typeof Fql
    parsers = { parseFql, validate, lex }
  }
  return parsers
}

/** Longest subscription accepted, in characters: a condition, not a program. */
export const MAX_SUBSCRIPTION_LENGTH = 2_000

/** A compiled subscription: true when the call matches. */
export type CallPredicate = (call: Record<string, unknown>) => boolean

/** What a subscription refers to, as the parser knows it. */
const FIELDS = new Set(['type', 'event', 'name', 'userId', 'context', 'properties', 'traits'])
/** Fields that name an object: they need a member path (`properties.total`). */
const OBJECT_FIELDS = new Set(['context', 'properties', 'traits'])
const COMPARISONS = new Set(['=', '!=', '<', '<=', '>', '>='])
const FUNCTIONS = new Set(['contains', 'match'])

/** Why a subscription was refused and where: `position` counts characters from 0. */
export class SubscriptionSyntaxError extends Error {
  readonly position: number
  constructor(position: number, message: string) {
    super(`At position ${position}: ${message}`)
    this.name = 'SubscriptionSyntaxError'
    this.position = position
  }
}

interface Token {
  type: string
  value: string
  position: number
}

/** The lexer's tokens with where each starts (the lexer keeps no positions; tokens appear in order). */
function tokensOf(text: string): Token[] {
  const lexed = segment().lex(text)
  if (lexed.error) {
    // The lexer may count past the end on an unterminated string.
    throw new SubscriptionSyntaxError(
      Math.min(lexed.error.cursor.column, text.length),
      `${lexed.error.message}.`,
    )
  }
  const tokens: Token[] = []
  let cursor = 0
  for (const token of lexed.tokens) {
    if (token.type === 'eos') {
      tokens.push({ type: 'eos', value: '', position: text.length })
      continue
    }
    const at = text.indexOf(token.value, cursor)
    const position = at === -1 ? cursor : at
    cursor = position + token.value.length
    tokens.push({ type: token.type, value: token.value, position })
  }
  return tokens
}

/** Reads tokens by the grammar `@segment/destination-subscriptions` implements; throws at the first deviation. */
class GrammarCheck {
  #at = 0
  readonly #tokens: Token[]

  constructor(tokens: Token[]) {
    this.#tokens = tokens
  }

  run(): void {
    this.#conditions(0)
    const rest = this.#peek()
    if (rest.type === 'parenright') this.#fail(rest, 'this ")" closes no "(".')
    if (rest.type !== 'eos') this.#fail(rest, `expected "and", "or" or the end, found ${describe(rest)}.`)
  }

  #peek(): Token {
    return this.#tokens[this.#at]!
  }

  #next(): Token {
    const token = this.#tokens[this.#at]!
    if (token.type !== 'eos') this.#at++
    return token
  }

  #fail(token: Token, message: string): never {
    throw new SubscriptionSyntaxError(token.position, message)
  }

  /** condition (("and" | "or") condition)*, one kind of operator per group. */
  #conditions(depth: number): void {
    this.#condition(depth)
    let joiner: string | undefined
    while (this.#peek().type === 'conditional') {
      const token = this.#next()
      if (joiner !== undefined && token.value !== joiner) {
        this.#fail(
          token,
          `"${joiner}" and "${token.value}" are mixed in one group; wrap one side in parentheses, e.g. a and (b or c).`,
        )
      }
      joiner = token.value
      this.#condition(depth)
    }
  }

  #condition(depth: number): void {
    const token = this.#peek()
    if (token.type === 'parenleft') {
      if (depth > 0) this.#fail(token, 'groups cannot be nested; write each group at the top level.')
      this.#next()
      this.#conditions(depth + 1)
      const close = this.#next()
      if (close.type !== 'parenright') this.#fail(close, `expected ")", found ${describe(close)}.`)
      return
    }
    if (token.type === 'operator' && token.value === '!') {
      this.#next()
      const name = this.#peek()
      if (name.type !== 'ident' || !FUNCTIONS.has(name.value)) {
        this.#fail(name, '"!" may only negate contains(…) or match(…).')
      }
      this.#function()
      return
    }
    if (token.type === 'ident' && FUNCTIONS.has(token.value)) {
      this.#function()
      return
    }
    this.#field()
    const operator = this.#next()
    if (operator.type !== 'operator' || !COMPARISONS.has(operator.value)) {
      this.#fail(operator, `expected one of ${[...COMPARISONS].join(' ')}, found ${describe(operator)}.`)
    }
    const value = this.#next()
    const isLiteral =
      value.type === 'string' ||
      value.type === 'number' ||
      value.type === 'null' ||
      (value.type === 'ident' && (value.value === 'true' || value.value === 'false'))
    if (!isLiteral) {
      this.#fail(value, `expected a value ("text", a number, true, false or null), found ${describe(value)}.`)
    }
    this.#string(value)
  }

  /** contains(field, "text") or match(field, "prefix*" | "*suffix"). */
  #function(): void {
    const name = this.#next()
    const open = this.#next()
    if (open.type !== 'parenleft') this.#fail(open, `expected "(" after ${name.value}.`)
    this.#field()
    const comma = this.#next()
    if (comma.type !== 'comma')
      this.#fail(comma, `expected "," in ${name.value}(…), found ${describe(comma)}.`)
    const value = this.#next()
    if (value.type !== 'string') this.#fail(value, `${name.value}(…) takes a "quoted text" second.`)
    this.#string(value)
    if (name.value === 'match' && !value.value.startsWith('"*') && !value.value.endsWith('*"')) {
      this.#fail(value, 'match(…) takes a pattern that starts or ends with *, e.g. "Order*" or "*Completed".')
    }
    const close = this.#next()
    if (close.type !== 'parenright') this.#fail(close, `expected ")" to close ${name.value}(…).`)
  }

  /** A field the parser knows: type, event, name, userId, or context./properties./traits. with a path. */
  #field(): void {
    const head = this.#next()
    if (head.type !== 'ident' || !FIELDS.has(head.value)) {
      this.#fail(
        head,
        `expected a field (type, event, name, userId, properties.…, traits.…, context.…), found ${describe(head)}.`,
      )
    }
    let segments = 0
    while (this.#peek().type === 'dot') {
      this.#next()
      const member = this.#next()
      if (member.type !== 'ident')
        this.#fail(member, `expected a member name after ".", found ${describe(member)}.`)
      segments++
    }
    if (OBJECT_FIELDS.has(head.value) && segments === 0) {
      this.#fail(head, `${head.value} needs a member, e.g. ${head.value}.plan.`)
    }
    if (!OBJECT_FIELDS.has(head.value) && segments > 0) {
      this.#fail(head, `${head.value} has no members.`)
    }
  }

  #string(token: Token): void {
    if (token.type === 'string' && token.value.includes('\\')) {
      this.#fail(token, 'a backslash in a quoted text is not supported.')
    }
  }
}

function describe(token: Token): string {
  return token.type === 'eos' ? 'the end' : JSON.stringify(token.value)
}

/** Throws `SubscriptionSyntaxError` unless `text` is a subscription Segment's parser reads as written. */
export function checkSubscription(text: string): void {
  if (text.length > MAX_SUBSCRIPTION_LENGTH) {
    throw new SubscriptionSyntaxError(
      MAX_SUBSCRIPTION_LENGTH,
      `a subscription may be at most ${MAX_SUBSCRIPTION_LENGTH} characters long.`,
    )
  }
  const tokens = tokensOf(text)
  if (tokens.length === 1) throw new SubscriptionSyntaxError(0, 'the subscription is empty.')
  new GrammarCheck(tokens).run()
}

/** Compiles a subscription checked by `checkSubscription`. */
export function compileSubscription(text: string): CallPredicate {
  const condition = parseSubscription(text)
  const { validate } = segment()
  return (call) => validate(condition, call)
}

/** Segment's parse of a subscription checked by `checkSubscription`. */
export function parseSubscription(text: string): Condition {
  checkSubscription(text)
  const result = segment().parseFql(text)
  if ('error' in result) throw new SubscriptionSyntaxError(0, result.error.message)
  return result
}

/** A parsed subscription: Segment's condition tree. */
export type Condition = Exclude<ReturnType<typeof Subscriptions.parseFql>, { error: unknown }>
