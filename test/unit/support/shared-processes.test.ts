import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mocksAwsClient, unitFilesMockingAws, unitTestFiles } from '#test/support/unit-files';
import config from '../../../vitest.config';

const ROOT = join(import.meta.dirname, '..', '..', '..');

type Project = { test?: { name?: string; include?: string[]; isolate?: boolean } };
const PROJECTS = (config.test?.projects ?? []) as Project[];

/** A project of vitest.config.ts, by name. */
const projectNamed = (name: string) => PROJECTS.find((project) => project.test?.name === name)?.test;
/** The files of a project of vitest.config.ts. */
const filesOf = (name: string): string[] => projectNamed(name)?.include ?? [];
const sharedUnitFiles = () => filesOf('unit');
const source = (file: string) => readFileSync(join(ROOT, file), 'utf8');

describe('the unit tests whose files share processes (vitest.config.ts)', () => {
  it('are every unit file but those that mock an AWS client, whose mock is the whole process’s', () => {
    const mocking = unitFilesMockingAws();
    // The adapters' tests mock the SDK's clients (mockClient): they exist, and run apart.
    expect(mocking).toContain('test/unit/lib/adapters/dynamodb/sessions.test.ts');
    expect(sharedUnitFiles().length).toBeGreaterThan(50);
    expect([...sharedUnitFiles(), ...mocking].sort()).toEqual(unitTestFiles().sort());
    expect(sharedUnitFiles().filter((file) => mocking.includes(file))).toEqual([]);
  });

  it('mock no module: a mock would reach every file that runs after it in the same process', () => {
    const mocking = sharedUnitFiles().filter((file) => /\bvi\.(do)?[mM]ock\(/.test(source(file)));
    expect(mocking).toEqual([]);
  });
});

describe('the standalone test files, which share processes too (vitest.config.ts)', () => {
  const standalone = filesOf('standalone');

  it('run in shared processes, and each of them exists', () => {
    expect(projectNamed('standalone')?.isolate).toBe(false);
    expect(standalone.length).toBeGreaterThan(10);
    for (const file of standalone) expect(existsSync(join(ROOT, file)), file).toBe(true);
  });

  it('start no local runtime and load no handler: the handlers read their environment once, at import', () => {
    // By name, or through the support modules that start one (the fault suite's runtime behind a proxy).
    const starting = standalone.filter((file) =>
      /useTestRuntime|startTestRuntime|startLocalRuntime|loadHandler|#functions\/|#local\/runtime'|#test\/support\/(local-runtime|runtime-fixture|fault-suite)'/.test(
        source(file),
      ),
    );
    expect(starting).toEqual([]);
  });

  it('mock no module and no AWS client, and put back the timers and variables they fake', () => {
    const mocking = standalone.filter(
      (file) => /\bvi\.(do)?[mM]ock\(/.test(source(file)) || mocksAwsClient(source(file)),
    );
    expect(mocking).toEqual([]);
    for (const file of standalone) {
      const text = source(file);
      if (/vi\.useFakeTimers/.test(text)) expect(text, file).toMatch(/vi\.useRealTimers\(\)/);
      if (/vi\.stubEnv/.test(text)) expect(text, file).toMatch(/vi\.unstubAllEnvs\(\)/);
      if (/vi\.stubGlobal/.test(text)) expect(text, file).toMatch(/vi\.unstubAllGlobals\(\)/);
      if (/vi\.spyOn/.test(text)) expect(text, file).toMatch(/vi\.restoreAllMocks\(\)|\.mockRestore\(\)/);
      // Assigned, deleted or merged into, however it is spelt.
      expect(text, `${file} changes process.env`).not.toMatch(
        /process\.env(\.\w+|\[[^\]]+\])\s*(\?\?|\|\||&&)?=[^=]|delete\s+process\.env|Object\.assign\(\s*process\.env/,
      );
      expect(text, `${file} changes the process`).not.toMatch(/process\.(chdir|on|once)\(/);
    }
  });
});
