/**
 * Tracking API limits (docs/tracking-api.md), the same as Segment's so existing SDKs batch the same way.
 * KB means 1,024 bytes.
 */

/** Largest request body, measured after gzip decompression. Over it: 413. */
export const MAX_REQUEST_BYTES = 500 * 1024

/** Largest compressed body read off the wire; anything that inflates past MAX_REQUEST_BYTES is refused anyway. */
export const MAX_WIRE_BYTES = MAX_REQUEST_BYTES + 64 * 1024

/** Largest single message, serialized as JSON. Over it: that message alone is rejected. */
export const MAX_MESSAGE_BYTES = 32 * 1024

/** Most items in one `/v1/batch` request. Over it: 400. */
export const MAX_BATCH_ITEMS = 2_500

/** Longest `messageId` kept; longer ones are rejected so the dedupe index stays small. */
export const MAX_MESSAGE_ID_LENGTH = 256

/**
 * Longest `userId` or `anonymousId`, in characters (Unicode code points). Far above any real id; the
 * management API takes ids up to the same length (a regulation's `subjectIds`, the delivery and profile
 * filters), so every id Sluice accepts can be named there.
 */
export const MAX_ID_LENGTH = 1_024
