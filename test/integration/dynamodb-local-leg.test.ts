import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { childEnv } from '#test/support/child-env';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');

describe('npm run test:dynamodb-local', () => {
  it('skips with the reason printed, and succeeds, where there is no Java', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/dynamodb-local/run.ts'], {
      cwd: ROOT,
      env: childEnv({ JAVA_HOME: join(ROOT, 'no-such-java') }),
    });
    expect(stdout).toMatch(/^DynamoDB Local leg skipped: no Java runtime .*openjdk-17-jre-headless\.$/m);
  });
});
