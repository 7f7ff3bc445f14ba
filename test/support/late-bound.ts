import { usePerFile } from './per-file';

/**
 * A stand-in for a value that exists only while a file's (or suite's) tests run: every read goes to
 * `current()`, which throws outside that time. Methods run on the value itself, not on the stand-in, so
 * a file can hold the value in a `const` at the top and pass it wherever the real one goes.
 */
export function lateBound<T extends object>(current: () => T): T {
  return new Proxy({} as T, {
    get: (_target, property) => {
      const value = current();
      const member = Reflect.get(value, property);
      return typeof member === 'function' ? member.bind(value) : member;
    },
    has: (_target, property) => Reflect.has(current(), property),
    ownKeys: () => Reflect.ownKeys(current()),
    getOwnPropertyDescriptor: (_target, property) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(current(), property);
      return descriptor && { ...descriptor, configurable: true };
    },
  });
}

/**
 * A value made before the tests of a file or suite and released after them (`usePerFile`); what is
 * returned stands for it once made. `what` names it in the error of a use outside those tests.
 */
export function useForTests<T extends object>(
  what: string,
  make: () => Promise<T>,
  release: (value: T) => unknown = () => undefined,
): T {
  return lateBound(usePerFile(what, make, release));
}
