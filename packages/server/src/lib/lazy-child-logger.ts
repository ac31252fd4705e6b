import type { Bindings, ChildLoggerOptions, Level, LevelWithSilentOrString, Logger } from 'pino'

type LogMethod = (...args: unknown[]) => void

/**
 * A request's logger (Fastify's `request.log`) that becomes a real pino child, with the request id
 * bound, only when something logs through it at an enabled level. Creating a child serializes and
 * redacts its bindings: on the Tracking API, where almost no request logs anything, that was a few
 * percent of the HTTP thread's CPU. What is logged, and how, is unchanged.
 */
export class LazyChildLogger {
  readonly #parent: Logger
  readonly #bindings: Bindings
  readonly #options: ChildLoggerOptions
  #child: Logger | undefined

  constructor(parent: Logger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
  }

  get level(): LevelWithSilentOrString {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level
  }

  set level(level: LevelWithSilentOrString) {
    this.#real().level = level
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.#real().child(bindings, options)
  }

  fatal(...args: unknown[]): void {
    this.#log('fatal', args)
  }
  error(...args: unknown[]): void {
    this.#log('error', args)
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args)
  }
  info(...args: unknown[]): void {
    this.#log('info', args)
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args)
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args)
  }
  silent(): void {}

  #log(level: Level, args: unknown[]): void {
    // A level of its own (a route's logLevel) needs the child to decide; else the parent's decides.
    if (this.#child === undefined && this.#options.level === undefined && !this.#parent.isLevelEnabled(level))
      return
    ;(this.#real()[level] as LogMethod)(...args)
  }

  #real(): Logger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options)
    return this.#child
  }
}
