import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The README and docs/ are how a newcomer finds their way in, so their links must lead somewhere, the
 * README must stay short, and its folder map must describe the tree as it is.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const README = join(ROOT, 'README.md');
const DOCS = join(ROOT, 'docs');
const MAX_README_LINES = 200;

const docPages = readdirSync(DOCS)
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => join(DOCS, name));
const pages = [README, ...docPages];

/** The Markdown with fenced code blocks blanked out (line breaks kept, so offsets still give lines). */
function withoutCodeBlocks(markdown: string): string {
  let fence: string | undefined;
  return markdown
    .split('\n')
    .map((line) => {
      const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence === undefined && marker) {
        fence = marker;
        return '';
      }
      if (fence !== undefined) {
        // A closing fence: the opening character, at least as many of it, and nothing else on the line.
        const closes = marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length;
        if (closes && line.trim() === marker) fence = undefined;
        return '';
      }
      return line;
    })
    .join('\n');
}

/** Inline code spans blanked out, so `[a](b)` written as code is not taken for a link. */
function withoutInlineCode(text: string): string {
  return text.replace(/(`+)[^`]*?\1/g, (span) => span.replace(/[^\n]/g, ' '));
}

interface Link {
  line: number;
  target: string;
}

/** Inline links and images outside code; link text may wrap onto the next line. */
function linksOf(markdown: string): Link[] {
  const text = withoutInlineCode(withoutCodeBlocks(markdown));
  const links: Link[] = [];
  for (const match of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const line = text.slice(0, match.index).split('\n').length;
    links.push({ line, target: match[1] ?? '' });
  }
  return links;
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
function githubSlug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a Markdown file's headings, with GitHub's `-1`, `-2` suffixes for repeated ones. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutCodeBlocks(markdown).split('\n')) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = githubSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * The links of `file` that lead nowhere: a relative path to nothing in the repository, or an anchor
 * that no heading of the target page has, or that leaves the repository (the shared spec next to a
 * checkout, say, which no clone has: docs/spec.md is the repository's own statement of it). Absolute URLs
 * are not checked.
 */
function brokenLinks(file: string, markdown: string, root = ROOT): string[] {
  const broken: string[] = [];
  const where = (link: Link) => `${relative(root, file)}:${link.line}: ${link.target}`;
  for (const link of linksOf(markdown)) {
    if (link.target === '' || /^[a-z][a-z0-9+.-]*:/i.test(link.target)) {
      if (link.target === '') broken.push(`${where(link)}(empty link)`);
      continue;
    }
    const hash = link.target.indexOf('#');
    const pathPart = hash === -1 ? link.target : link.target.slice(0, hash);
    const anchor = hash === -1 ? undefined : decodeURIComponent(link.target.slice(hash + 1));
    const target = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
    if (!isInside(root, target)) {
      broken.push(`${where(link)} (outside the repository: dead in a fresh clone)`);
      continue;
    }
    if (pathPart !== '' && !existsSync(target)) {
      broken.push(`${where(link)} (no such file)`);
      continue;
    }
    if (anchor !== undefined && target.endsWith('.md') && (target === file || statSync(target).isFile())) {
      const anchors = anchorsOf(target === file ? markdown : readFileSync(target, 'utf8'));
      if (!anchors.has(anchor.toLowerCase())) broken.push(`${where(link)} (no heading with that anchor)`);
    }
  }
  return broken;
}

/** The folder paths (backticked, ending in `/`) named in the README's "Folder map" section. */
function folderMapPaths(readme: string): string[] {
  const lines = withoutCodeBlocks(readme).split('\n');
  const start = lines.findIndex((line) => /^##\s+Folder map\s*$/i.test(line));
  if (start === -1) throw new Error('the README has no "## Folder map" section');
  const end = lines.findIndex((line, index) => index > start && /^#{1,2}\s/.test(line));
  const section = lines.slice(start + 1, end === -1 ? undefined : end).join('\n');
  return [...new Set([...section.matchAll(/`([^`\s]+\/)`/g)].map((match) => match[1] as string))];
}

describe('links in the README and docs/', () => {
  it.each(pages.map((page) => [relative(ROOT, page), page]))(
    '%s links only to files in the repository that exist, and to headings they have',
    (_name, page) => {
      expect(brokenLinks(page, readFileSync(page, 'utf8'))).toEqual([]);
    },
  );

  it('reports a missing file, a missing heading and a path outside the repository, and skips code and URLs', () => {
    const page = join(DOCS, 'example.md');
    const markdown = [
      '# Example',
      '## Same page',
      'See [the API](api.md), [a gone page](gone.md), [same page](#same-page) and [nowhere](#nowhere).',
      'Wrapped [link',
      'text](api.md#no-such-heading), [outside](../../shared/spec/x.md), [web](https://example.com/x).',
      '`[code](nothing.md)`',
      '```md',
      '[fenced](nothing.md)',
      '```',
    ].join('\n');
    expect(brokenLinks(page, markdown)).toEqual([
      'docs/example.md:3: gone.md (no such file)',
      'docs/example.md:3: #nowhere (no heading with that anchor)',
      'docs/example.md:4: api.md#no-such-heading (no heading with that anchor)',
      'docs/example.md:5: ../../shared/spec/x.md (outside the repository: dead in a fresh clone)',
    ]);
  });

  it('derives anchors the way GitHub does, numbering repeated headings', () => {
    const anchors = anchorsOf(
      '# Title\n## `GET /embed?token=…`: the embed page\n## Local runtime ↔ AWS\n## Notes\n## Notes\n',
    );
    expect([...anchors]).toEqual([
      'title',
      'get-embedtoken-the-embed-page',
      'local-runtime--aws',
      'notes',
      'notes-1',
    ]);
  });

  it('links every page of docs/ from the README', () => {
    const linked = new Set(
      linksOf(readFileSync(README, 'utf8')).map((link) => resolve(ROOT, link.target.split('#')[0] ?? '')),
    );
    expect(docPages.filter((page) => !linked.has(page)).map((page) => relative(ROOT, page))).toEqual([]);
  });
});

describe('the README', () => {
  const readme = readFileSync(README, 'utf8');

  it(`stays at most ${MAX_README_LINES} lines long; the rest belongs in docs/`, () => {
    expect(readme.replace(/\n$/, '').split('\n').length).toBeLessThanOrEqual(MAX_README_LINES);
  });

  it('names in its folder map only folders that exist in the tree', () => {
    const paths = folderMapPaths(readme);
    expect(paths.length).toBeGreaterThan(0);
    const missing = paths.filter((path) => {
      const full = resolve(ROOT, path);
      return !isInside(ROOT, full) || !existsSync(full) || !statSync(full).isDirectory();
    });
    expect(missing).toEqual([]);
  });

  it('has a folder map that the check can read', () => {
    expect(() => folderMapPaths('# No map here\n')).toThrow(/Folder map/);
    expect(folderMapPaths('## Folder map\n- `lib/`, `lib/domain/`\n## Next\n- `ignored/`\n')).toEqual([
      'lib/',
      'lib/domain/',
    ]);
  });
});

/** Every mention of a numbered work item ("issue 5", "issues 5, 11", "#12") in `text`, with its line. */
function workItemMentions(text: string): { line: number; text: string }[] {
  const found: { line: number; text: string }[] = [];
  for (const match of text.matchAll(/\bissues?\s*#?\d+|(?<![\w/&])#\d+\b/gi)) {
    found.push({ line: text.slice(0, match.index).split('\n').length, text: match[0] });
  }
  return found;
}

describe('the README and docs/ say what holds, not which work item brought it', () => {
  it.each(pages.map((page) => [relative(ROOT, page), page]))('%s names no issue number', (_name, page) => {
    expect(workItemMentions(readFileSync(page, 'utf8'))).toEqual([]);
  });

  it('finds "issue 5", "issues 5, 11", "(issue\\n14)" and "#12", and leaves "the issue" and "/#12" alone', () => {
    const text =
      'Since issue 5.\nAs issues 5, 11 asked.\n(issue\n14)\nSee #12.\nthe issue at hand, a/#12 link';
    expect(workItemMentions(text)).toEqual([
      { line: 1, text: 'issue 5' },
      { line: 2, text: 'issues 5' },
      { line: 3, text: 'issue\n14' },
      { line: 5, text: '#12' },
    ]);
  });
});

describe('docs/operations.md, function configuration', () => {
  it('lists every variable the stack gives any function, each in its own row', async () => {
    const { ALL_FUNCTIONS, variablesOf } = await import('#lib/definitions/environment');
    const page = readFileSync(join(DOCS, 'operations.md'), 'utf8');
    const section = page.slice(page.indexOf('## Function configuration'));
    const rows = section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split('|')[1] ?? '');
    const given = new Set(Object.values(ALL_FUNCTIONS).flatMap((definition) => variablesOf(definition)));
    const missing = [...given].filter((variable) => !rows.some((row) => row.includes(`\`${variable}\``)));
    expect(missing).toEqual([]);
  });
});

describe('files the docs have an operator make', () => {
  it.each(['cdk-outputs.json', 'client/embed-session-client-0.1.0.tgz', 'embed-session-client-0.1.0.tgz'])(
    'ignores %s, which `cdk deploy --outputs-file` or `npm pack --workspace client` leaves in the checkout',
    async (path) => {
      const { execFileSync } = await import('node:child_process');
      const { childEnv } = await import('#test/support/child-env');
      // Exit 0 when ignored; check-ignore throws on exit 1 (not ignored).
      expect(() =>
        execFileSync('git', ['check-ignore', '--no-index', '-q', path], { cwd: ROOT, env: childEnv() }),
      ).not.toThrow();
    },
  );
});
