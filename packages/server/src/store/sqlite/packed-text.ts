/**
 * Values that cross between the main thread and the store thread as one string and one buffer of
 * numbers instead of structured-cloned objects: structured clone writes every property name of every
 * object, on the sending thread. packed-outcomes.ts and packed-claims.ts lay out their records with it.
 */
export interface Packed {
  /** Every string, back to back, in the order `numbers` gives their lengths. */
  text: string
  numbers: Float64Array
}

/** Builds a `Packed`: numbers as they come, strings as their length (-1 for null) and their text. */
export class Packer {
  private readonly numbers: number[] = []
  private readonly parts: string[] = []

  number(value: number): void {
    this.numbers.push(value)
  }

  /** A nullable number (NaN stands for null). */
  maybe(value: number | null): void {
    this.numbers.push(value ?? Number.NaN)
  }

  string(value: string | null): void {
    if (value == null) {
      this.numbers.push(-1)
      return
    }
    this.numbers.push(value.length)
    this.parts.push(value)
  }

  finish(): Packed {
    return { text: this.parts.join(''), numbers: Float64Array.from(this.numbers) }
  }
}

/** Reads a `Packed` back in the order it was written. */
export class Unpacker {
  private readonly packed: Packed
  private at = 0
  private offset = 0

  constructor(packed: Packed) {
    this.packed = packed
  }

  number(): number {
    return this.packed.numbers[this.at++]!
  }

  maybe(): number | null {
    const value = this.number()
    return Number.isNaN(value) ? null : value
  }

  string(): string | null {
    const length = this.number()
    if (length < 0) return null
    const start = this.offset
    this.offset += length
    return this.packed.text.slice(start, this.offset)
  }
}
