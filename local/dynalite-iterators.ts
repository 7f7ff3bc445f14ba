import { createRequire } from 'node:module';

/** The part of an abstract-level module this workaround and its test use. */
export interface AbstractLevelModule {
  AbstractLevel: {
    prototype: { attachResource(resource: object): void; detachResource(resource: object): void };
  };
  AbstractKeyIterator: { prototype: object };
  AbstractValueIterator: { prototype: object };
}

/**
 * The abstract-level module(s) behind dynalite's two stores, resolved the way dynalite itself resolves
 * them: memory-level (in memory) and classic-level (DATA_DIR). Usually one and the same module.
 */
export function abstractLevelModulesOfDynalite(): AbstractLevelModule[] {
  const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
  const modules = new Set<AbstractLevelModule>();
  for (const store of ['memory-level', 'classic-level']) {
    const fromStore = createRequire(fromDynalite.resolve(store === 'classic-level' ? 'level' : store));
    const storePath =
      store === 'classic-level' ? fromStore.resolve('classic-level') : fromStore.resolve(store);
    modules.add(createRequire(storePath)('abstract-level') as AbstractLevelModule);
  }
  return [...modules];
}

/**
 * Works around a leak in dynalite 4.0.0: it wraps each LevelDB iterator in a stream whose end and destroy
 * call `iterator.return()`, a method abstract-level's iterators do not have (theirs is `close()`). So no
 * Query or Scan ever closes its iterator; each stays attached to the database and keeps a snapshot of the
 * in-memory tree alive, and memory grows with every embed page load. Giving the iterators a `return()`
 * that closes them lets dynalite's own clean-up run. Idempotent; a no-op once abstract-level has one.
 */
export function closeDynaliteIteratorsOnEnd(): void {
  for (const level of abstractLevelModulesOfDynalite()) {
    for (const iterator of [level.AbstractKeyIterator, level.AbstractValueIterator]) {
      if ('return' in iterator.prototype) continue;
      Object.defineProperty(iterator.prototype, 'return', {
        configurable: true,
        writable: true,
        value(this: { close(): Promise<void> }) {
          return this.close().then(() => ({ done: true, value: undefined }));
        },
      });
    }
  }
}
