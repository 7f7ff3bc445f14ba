import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { unitFilesMockingAws, unitTestFiles } from '#test/support/unit-files';
import config from '../../../vitest.config';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/** The files of the project whose files share processes. */
function sharedUnitFiles(): string[] {
  const projects = (config.test?.projects ?? []) as { test?: { name?: string; include?: string[] } }[];
  const unit = projects.find((project) => project.test?.name === 'unit');
  return unit?.test?.include ?? [];
}

describe('the unit tests whose files share processes (vitest.config.ts)', () => {
  it('are every unit file but those that mock an AWS client, whose mock is the whole process’s', () => {
    const mocking = unitFilesMockingAws();
    // The adapters' tests mock the SDK's clients with aws-sdk-client-mock: they exist, and run apart.
    expect(mocking).toContain('test/unit/lib/adapters/dynamodb/sessions.test.ts');
    expect(sharedUnitFiles().length).toBeGreaterThan(50);
    expect([...sharedUnitFiles(), ...mocking].sort()).toEqual(unitTestFiles().sort());
    expect(sharedUnitFiles().filter((file) => mocking.includes(file))).toEqual([]);
  });

  it('mock no module: a mock would reach every file that runs after it in the same process', () => {
    const mocking = sharedUnitFiles().filter((file) =>
      /\bvi\.(do)?[mM]ock\(/.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    expect(mocking).toEqual([]);
  });
});
