import { afterAll, beforeAll } from 'vitest';

/**
 * Something the tests of one file (or describe block) share: acquired before them, released after them.
 * The function returned hands it to them, and throws when called outside them.
 */
export function usePerFile<T>(
  what: string,
  acquire: () => T | Promise<T>,
  release: (value: T) => unknown,
): () => T {
  let value: T | undefined;
  beforeAll(async () => {
    value = await acquire();
  });
  afterAll(async () => {
    if (value !== undefined) await release(value);
    value = undefined;
  });
  return () => {
    if (value === undefined)
      throw new Error(`${what} is used outside its tests (before beforeAll or after afterAll)`);
    return value;
  };
}
