/**
 * When PostgreSQL rolls a transaction back as a whole to break a deadlock or a serialization conflict,
 * nothing of it was written, and running it again is safe: every transaction and statement of this
 * backend is a function of its inputs and what it reads inside, with no effect outside the database
 * until it returns. So every one is run again (`PostgresDatabase.transaction` and `retrying`), a few
 * times, after a short random pause that lets the other transaction finish first.
 *
 * Retrying is the safety net; the cause is avoided where it can be: transactions that lock several
 * deliveries lock them in id order, and those that touch the profile cursor lock it first.
 */

/** SQLSTATEs whose transaction was rolled back as a whole: nothing was written. */
const ROLLED_BACK = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
])

/** Tries of one transaction in all. */
export const MAX_TRIES = 5

export function isRolledBack(error: unknown): boolean {
  return ROLLED_BACK.has((error as { code?: string }).code ?? '')
}

/** Runs `work` again while PostgreSQL rolls it back as a whole, up to MAX_TRIES times in all. */
export async function retryRolledBack<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work()
    } catch (error) {
      if (attempt >= MAX_TRIES || !isRolledBack(error)) throw error
      // 1–10 ms, then up to 20, 40, …: the transaction that won has time to commit.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * 2 ** (attempt - 1)))
    }
  }
}
