/**
 * `make`, run on the first call and its promise shared by every later one; a failure is not remembered,
 * so the next call tries again.
 */
export function onFirstUse<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make();
    made.catch(() => {
      made = undefined;
    });
    return made;
  };
}
