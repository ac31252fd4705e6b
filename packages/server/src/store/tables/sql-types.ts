/** What every table module shares. */

/** SQLite answers synchronously and PostgreSQL asynchronously: the core awaits both. */
export type Awaitable<T> = T | Promise<T>

/** A boolean column as it comes back: 0/1 from SQLite, true/false from PostgreSQL. */
export type Flag = boolean | number
