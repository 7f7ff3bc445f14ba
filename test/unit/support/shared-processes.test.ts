import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const UNIT = join(import.meta.dirname, '..');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('the unit tests, whose files share processes (vitest.config.ts)', () => {
  it('mock no module: a mock would reach every file that runs after it in the same process', () => {
    const files = testFiles(UNIT);
    expect(files.length).toBeGreaterThan(50);
    const mocking = files.filter((file) => /\bvi\.(do)?[mM]ock\(/.test(readFileSync(file, 'utf8')));
    expect(mocking.map((file) => relative(UNIT, file))).toEqual([]);
  });
});
