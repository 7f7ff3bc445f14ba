import { READ_CACHE_LIMITS } from '#lib/adapters/cache/read-cache';

/**
 * How long a test over HTTP polls for a board or membership change to count: each execution environment
 * keeps what it read for `READ_CACHE_LIMITS.ttlMs` (lib/adapters/cache/read-cache.ts), and the margin covers the
 * requests' own time on a loaded machine.
 */
export const WITHIN_THE_BOARD_CACHE = { timeout: READ_CACHE_LIMITS.ttlMs + 1_500, interval: 50 } as const;
