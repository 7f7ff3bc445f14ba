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

/**
 * A record of data and closures that the tests of one file (or describe block) share, such as the local
 * runtime: `acquire` makes it before them, and its fields are copied onto the object returned here, which
 * is then the value itself, not a stand-in; `release` gets it after them, and its fields are removed. So
 * a file holds it in a `const` at the top and passes it wherever the value goes. Only for plain records:
 * an instance of a class keeps its methods on its prototype, and is shared with `usePerFile` instead.
 */
export function useSharedRecord<T extends object>(
  acquire: () => T | Promise<T>,
  release: (value: T) => unknown = () => undefined,
): T {
  const shared = {} as T;
  let acquired = false;
  beforeAll(async () => {
    Object.assign(shared, await acquire());
    acquired = true;
  });
  afterAll(async () => {
    if (!acquired) return;
    acquired = false;
    await release(shared);
    for (const field of Object.keys(shared)) delete (shared as Record<string, unknown>)[field];
  });
  return shared;
}
