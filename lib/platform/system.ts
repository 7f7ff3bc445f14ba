import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock, RandomSource, Sleep } from '#lib/domain/ports';

/** The real clock. */
export const systemClock: Clock = { now: () => new Date() };

/** Randomness from the operating system's CSPRNG. */
export const cryptoRandom: RandomSource = { bytes: (size) => randomBytes(size), uuid: () => randomUUID() };

/** The real sleep, on a timer. */
export const timerSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
