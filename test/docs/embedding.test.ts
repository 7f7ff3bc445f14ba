import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOST_CORE, HOST_ERROR_CODES } from '#lib/adapters/http/embed/host-script';

/**
 * docs/embedding.md is where a host developer learns what `mount` takes and what `onError` may report:
 * its tables must name exactly what the host script reads and reports.
 */
const PAGE = readFileSync(join(import.meta.dirname, '../../docs/embedding.md'), 'utf8');

/** The first column of the table right under `heading`, each cell's code span. */
function firstColumn(heading: string): string[] {
  const start = PAGE.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`docs/embedding.md has no "${heading}"`);
  const table = /\n(\|[^\n]*\|\n)+/.exec(PAGE.slice(start))?.[0] ?? '';
  return table
    .trim()
    .split('\n')
    .slice(2)
    .map((row) => /^\|\s*`([^`]+)`/.exec(row)?.[1] ?? `unreadable row: ${row}`);
}

describe('docs/embedding.md', () => {
  it('lists every code onError may report, in the host script’s order, and no other', () => {
    expect(firstColumn('### Error codes')).toEqual([...HOST_ERROR_CODES]);
  });

  it('lists every option mount reads, and no other', () => {
    const read = new Set([...HOST_CORE.matchAll(/\bsettings\.(\w+)/g)].map((match) => match[1]));
    expect(firstColumn('## The host script').sort()).toEqual([...read].sort());
  });
});
