type Listener<T> = (event: T) => void

/**
 * A minimal typed event emitter that works on every runtime (no `node:events`). A listener that
 * throws does not break delivery: its error is rethrown on a microtask, where it surfaces as an
 * uncaught exception like any other bug.
 */
export class Emitter<Events extends object> {
  private readonly listeners: { [K in keyof Events]?: Listener<Events[K]>[] } = {}

  /** Calls `listener` on every `name` event. */
  on<K extends keyof Events>(name: K, listener: Listener<Events[K]>): this {
    const list = this.listeners[name]
    if (list) list.push(listener)
    else this.listeners[name] = [listener]
    return this
  }

  /** Calls `listener` on the next `name` event only. */
  once<K extends keyof Events>(name: K, listener: Listener<Events[K]>): this {
    const wrapper: Listener<Events[K]> = (event) => {
      this.off(name, wrapper)
      listener(event)
    }
    return this.on(name, wrapper)
  }

  /** Removes a listener added with `on`. */
  off<K extends keyof Events>(name: K, listener: Listener<Events[K]>): this {
    const list = this.listeners[name]
    const index = list ? list.indexOf(listener) : -1
    if (list && index >= 0) list.splice(index, 1)
    return this
  }

  /** Whether anyone listens to `name`, so callers can skip building the event. */
  protected listens(name: keyof Events): boolean {
    const list = this.listeners[name]
    return list !== undefined && list.length > 0
  }

  protected emit<K extends keyof Events>(name: K, event: Events[K]): void {
    const list = this.listeners[name]
    if (!list) return
    // A copy, so a listener that removes itself (once) does not skip the next one.
    for (const listener of list.slice()) {
      try {
        listener(event)
      } catch (error) {
        queueMicrotask(() => {
          throw error
        })
      }
    }
  }
}
