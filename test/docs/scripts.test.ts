import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The npm scripts the README and docs/ tell a reader to run exist, and the README names every script a
 * developer runs by hand, so a new one (an example's, say) is never found only by reading package.json.
 */
const ROOT = join(import.meta.dirname, '../..');
const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const pages = [
  ['README.md', README],
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => [`docs/${name}`, readFileSync(join(ROOT, 'docs', name), 'utf8')]),
] as const;

/** The scripts `text` runs: `npm start`, `npm test`, `npm run [-s|--silent] name`. */
function scriptsNamed(text: string): string[] {
  const named = [...text.matchAll(/\bnpm\s+(?:run\s+(?:-s\s+|--silent\s+)?([a-z][\w:-]*)|(start|test)\b)/g)];
  return [...new Set(named.map((match) => (match[1] ?? match[2]) as string))];
}

/**
 * Scripts nobody runs by hand: npm's lifecycle hooks, and the steps that `npm run lint` and
 * `npm run build:generated` run (each documented with the script that runs it).
 */
const RUN_BY_OTHERS = /^(pre|post)|^prepare$|^lint:|^build:(?!generated$)/;

describe('npm scripts in the README and docs/', () => {
  it.each(pages.map(([name, text]) => [name, text]))(
    '%s names only scripts package.json has',
    (_name, text) => {
      expect(scriptsNamed(text).filter((name) => !(name in scripts))).toEqual([]);
    },
  );

  it('the README names every script a developer runs by hand', () => {
    const named = new Set(scriptsNamed(README));
    const manual = Object.keys(scripts).filter((name) => !RUN_BY_OTHERS.test(name));
    expect(manual).toContain('example:host-page');
    expect(manual.filter((name) => !named.has(name))).toEqual([]);
  });

  it('reads `npm start`, `npm test` and `npm run` with or without --silent, also across a line break, and nothing else', () => {
    expect(
      scriptsNamed(
        'npm start; npm test; npm run lint; npm run -s a:b; npm run --silent admin -- x; npm install',
      ),
    ).toEqual(['start', 'test', 'lint', 'a:b', 'admin']);
  });
});
