import type { Fault } from './fault-proxy';
import { LATE_MS } from './short-aws-limits';

/** The write lands, then its answer is lost once: `then` says how. */
export function lostAnswer(then: 'reset' | 'internal-error'): Fault {
  return { kind: 'lose-answer', then };
}

/** The two ways a landed write's answer is lost, as `it.each` rows: what happens, and the fault's `then`. */
export const LOST_ANSWER_WAYS = [
  ['the connection is reset', 'reset'],
  ['DynamoDB answers InternalServerError', 'internal-error'],
] as const;

/**
 * Every attempt's write lands and its answer comes after the attempt's deadline, so the SDK runs out of
 * attempts on writes that all happened. Late under the short limits of the fault tests
 * (test/support/short-aws-limits.ts), which every file using it runs with.
 */
export const LATE_ON_EVERY_ATTEMPT: Fault = { kind: 'late-answer', delayMs: LATE_MS, count: 3 };

/**
 * The ways a landed write's answer goes missing that the SDK's own retry meets, as `it.each` rows: the
 * answer is lost, or the first one comes after the attempt's deadline (under the short limits, as above).
 */
export const MISSING_ANSWERS: Array<[string, Fault]> = [
  ['its answer is lost (connection reset)', lostAnswer('reset')],
  ['its answer is lost (InternalServerError)', lostAnswer('internal-error')],
  ['its first answer comes after the deadline', { kind: 'late-answer', delayMs: LATE_MS, count: 1 }],
];
