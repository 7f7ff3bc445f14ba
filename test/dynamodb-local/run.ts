/**
 * `npm run test:dynamodb-local`: the integration tests again, on AWS's DynamoDB Local instead of dynalite,
 * so that dynalite's differences from the real engine cannot hide a bug. Without Java it says why it
 * skips, and exits 0.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, sep } from 'node:path';
import { dynamoDbLocalUnavailable } from '#test/support/dynamodb-local';

const ROOT = join(import.meta.dirname, '..', '..');

/** Tests of npm start, of dynalite itself and of this script: DynamoDB Local would not change them. */
const NOT_ABOUT_THE_ENGINE = [
  'test/integration/npm-start.test.ts',
  'test/integration/dynalite-iterators.test.ts',
  'test/integration/ensure-tables.test.ts',
  'test/integration/dynamodb-local-leg.test.ts',
];

const unavailable = dynamoDbLocalUnavailable();
if (unavailable) {
  console.log(`DynamoDB Local leg skipped: ${unavailable}.`);
  process.exit(0);
}

console.log('DynamoDB Local leg: test/integration on DynamoDB Local (one in-memory instance per test file).');
// The files by name: an `--exclude` on the command line does not reach a project that has an `exclude` of
// its own (vitest.config.ts), so it would run the files above anyway.
const files = (readdirSync(join(ROOT, 'test', 'integration'), { recursive: true }) as string[])
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => `test/integration/${file.split(sep).join('/')}`)
  .filter((file) => !NOT_ABOUT_THE_ENGINE.includes(file))
  .sort();
const result = spawnSync(
  join(ROOT, 'node_modules', '.bin', 'vitest'),
  ['run', ...files, ...process.argv.slice(2)],
  { cwd: ROOT, stdio: 'inherit', env: { ...process.env, TEST_DYNAMODB: 'dynamodb-local' } },
);
process.exit(result.status ?? 1);
