import { type Synthesized, type SynthOptions, synthesize } from './infra';
import { usePerFile } from './per-file';

/**
 * The stack synthesized once for a test file: before its first test, its cloud assembly removed after its
 * last. Read it inside tests, or in a `beforeAll` registered after this call (hooks run in order).
 */
export function useSynthesized(options: SynthOptions = {}): Synthesized {
  const current = usePerFile(
    'the synthesized stack',
    () => synthesize(options),
    (synth) => synth.dispose(),
  );
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
