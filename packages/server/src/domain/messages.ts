/** Calls: what the Tracking API accepts (docs/tracking-api.md). */

/**
 * A messageId a source already sent within this window is a duplicate: accepted and dropped
 * (SLUICE_DEDUPE_WINDOW_HOURS sets it).
 */
export const DEFAULT_DEDUPE_WINDOW_HOURS = 24

/** The six Segment call types. A stored message is one of them; the Tracking API refuses anything else. */
export const MESSAGE_TYPES = ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const
export type MessageType = (typeof MESSAGE_TYPES)[number]

/**
 * What a stored message can be: a call, or a `delete` notification that a deletion request stored for
 * delivery to the user's destinations (privacy).
 */
export const STORED_MESSAGE_TYPES = [...MESSAGE_TYPES, 'delete'] as const
export type StoredMessageType = (typeof STORED_MESSAGE_TYPES)[number]
