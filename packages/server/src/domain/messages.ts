/** Calls: what the Tracking API accepts (docs/tracking-api.md). */

/**
 * A messageId a source already sent within this window is a duplicate: accepted and dropped
 * (SLUICE_DEDUPE_WINDOW_HOURS sets it).
 */
export const DEFAULT_DEDUPE_WINDOW_HOURS = 24

/** The six Segment call types. A stored message is one of them; the Tracking API refuses anything else. */
export const MESSAGE_TYPES = ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const
export type MessageType = (typeof MESSAGE_TYPES)[number]
