/**
 * Every Lambda function of the synthesized assembly started the way Lambda starts it: its asset on Node 24,
 * with exactly the variables its template sets (references resolved to values of the right shape) and
 * those Lambda sets itself, no DynamoDB and no AWS account. A function whose code needs a variable its
 * stack does not give it fails here at once, named with the variable, whether or not any route reaches it.
 */
import { describe, expect, it } from 'vitest';
import { BACKGROUND_FUNCTIONS } from '#lib/definitions/background';
import { FUNCTIONS } from '#lib/definitions/routes';
import { testTarget } from '#test/support/local-runtime';
import { assemblyDir, node24Path } from './fixture';
import { LambdaFunctionPool } from './lambda';
import { functionEnvironment } from './runtime';
import { assemblyFunctions, LOCAL_ENVIRONMENT, Resolver, readCloudAssembly } from './template';

const onAssembly = testTarget() === 'assembly';
const functions = onAssembly
  ? (() => {
      const assembly = readCloudAssembly(assemblyDir());
      return assemblyFunctions(assembly, new Resolver(assembly));
    })()
  : [];

describe.runIf(onAssembly)('every function of the synthesized assembly, started as Lambda starts it', () => {
  it('holds a function for each definition, the background functions included', () => {
    const descriptions = functions.map((fn) => fn.description);
    for (const definition of [...Object.values(FUNCTIONS), ...Object.values(BACKGROUND_FUNCTIONS)])
      expect(descriptions).toContain(definition.description);
  });

  it.each(functions.map((fn) => [fn.logicalId, fn] as const))(
    'starts %s with exactly its template environment',
    async (logicalId, fn) => {
      const pool = new LambdaFunctionPool(
        fn,
        node24Path(),
        functionEnvironment(fn, LOCAL_ENVIRONMENT.region),
      );
      const failure = await pool.coldStart();
      expect(failure, `${logicalId} failed at init: ${failure?.errorMessage}`).toBeUndefined();
    },
  );
});

describe.runIf(!onAssembly)(
  'the cold start of every function (skipped: runs under `npm run test:assembly`)',
  () => {
    it.skip('starts every function of the assembly; see npm run test:assembly', () => {});
  },
);
