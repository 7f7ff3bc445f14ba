import { afterAll, beforeAll } from 'vitest';
import { type Synthesized, type SynthOptions, synthesize } from './infra';

/**
 * The stack synthesized once for a test file: before its first test, its cloud assembly removed after its
 * last. Read it inside tests, or in a `beforeAll` registered after this call (hooks run in order).
 */
export function useSynthesized(options: SynthOptions = {}): Synthesized {
  let synth: Synthesized | undefined;
  beforeAll(() => {
    synth = synthesize(options);
  });
  afterAll(() => synth?.dispose());
  const current = (): Synthesized => {
    if (synth === undefined) throw new Error('The synthesized stack is read before its beforeAll ran');
    return synth;
  };
  return {
    get app() {
      return current().app;
    },
    get stack() {
      return current().stack;
    },
    get template() {
      return current().template;
    },
    get outdir() {
      return current().outdir;
    },
    dispose: () => current().dispose(),
  };
}
