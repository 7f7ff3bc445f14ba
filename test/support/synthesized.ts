import { type Synthesized, type SynthOptions, synthesize } from './infra';
import { usePerFile } from './per-file';

/**
 * The stack as `cdk.json` configures it, synthesized once for every test file of the process that reads
 * it (the stack's test files share one process: vitest.config.ts), its cloud assembly removed when the
 * process ends.
 */
let shared: Synthesized | undefined;
function sharedSynthesis(): Synthesized {
  if (!shared) {
    const synth = synthesize();
    process.once('exit', () => synth.dispose());
    shared = synth;
  }
  return shared;
}

/**
 * The stack synthesized for a test file: the shared synthesis without options; with options (other
 * context, real bundling), one of the file's own, made before its first test and removed after its last.
 * Read it inside tests, or in a `beforeAll` registered after this call (hooks run in order).
 */
export function useSynthesized(options: SynthOptions = {}): Synthesized {
  const own = Object.keys(options).length > 0;
  const current = usePerFile(
    'the synthesized stack',
    () => (own ? synthesize(options) : sharedSynthesis()),
    (synth) => (own ? synth.dispose() : undefined),
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
