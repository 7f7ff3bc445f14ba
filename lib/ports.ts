import { randomBytes, randomUUID } from 'node:crypto';

/** Source of the current time; injected so tests can freeze it. */
export interface Clock {
  now(): Date;
}

/** Source of cryptographic randomness; injected so tests can make it deterministic. */
export interface RandomSource {
  bytes(size: number): Buffer;
  uuid(): string;
}

export const systemClock: Clock = { now: () => new Date() };

export const cryptoRandom: RandomSource = { bytes: (size) => randomBytes(size), uuid: () => randomUUID() };

/** Waits `ms` milliseconds; injected so tests of retries need not wait. */
export type Sleep = (ms: number) => Promise<void>;

/** The real sleep, on a timer. */
export const timerSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
