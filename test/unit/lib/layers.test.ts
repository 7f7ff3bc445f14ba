import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/**
 * The one rule of lib/: every folder is one ring, and imports only its own folder, a ring inside it, or
 * the shared ground. Inside out: lib/domain (entities, rules and the ports), lib/use-cases (what the
 * service does, on those ports), then one folder per technology under lib/adapters (driven adapters
 * implement a port; driving ones turn a request, a stream record or a queued message into a use-case
 * call). The shared ground is lib/definitions (descriptors, plain data) and lib/platform (configuration,
 * logger, clock, the AWS call policy). No adapter folder imports another, and only the composition roots
 * outside lib/ (functions/, local/, admin/, infra/) name a concrete adapter.
 */
const ADAPTER = ['lib/domain', 'lib/use-cases', 'lib/definitions', 'lib/platform'] as const;
const FOLDERS: Readonly<Record<string, readonly string[]>> = {
  'lib/domain': [],
  'lib/use-cases': ['lib/domain'],
  'lib/definitions': ['lib/domain'],
  'lib/platform': ['lib/domain', 'lib/definitions'],
  'lib/adapters/api-gateway': ADAPTER,
  'lib/adapters/cache': ADAPTER,
  'lib/adapters/dynamodb': ADAPTER,
  'lib/adapters/eventbridge': ADAPTER,
  'lib/adapters/http': ADAPTER,
  'lib/adapters/outbound-http': ADAPTER,
  'lib/adapters/signing': ADAPTER,
  'lib/adapters/sqs': ADAPTER,
  'lib/adapters/timers': ADAPTER,
};

/** The domain and the use cases run on their ports alone: no package, no SDK, only Node's crypto. */
const PACKAGES_ALLOWED: Readonly<Record<string, readonly RegExp[]>> = {
  'lib/domain': [/^node:crypto$/],
  'lib/use-cases': [/^node:crypto$/],
};

/** Nothing in lib/ may depend on the deployment, the local runtime, the handlers or the CLI. */
const LIB_FORBIDDEN = [
  /^#infra\//,
  /^#local\//,
  /^#functions\//,
  /^#admin\//,
  /^aws-cdk-lib/,
  /^constructs$/,
];

/** Every module specifier a TypeScript source imports or re-exports, static or dynamic. */
function importsOf(source: string): string[] {
  const specifiers: string[] = [];
  const patterns = [/\bfrom\s+'([^']+)'/g, /\bimport\s+'([^']+)'/g, /\bimport\(\s*'([^']+)'\s*\)/g];
  for (const pattern of patterns)
    for (const match of source.matchAll(pattern)) specifiers.push(match[1] ?? '');
  return specifiers;
}

/** The folder of FOLDERS a path of lib/ belongs to (its subfolders included), if any. */
function folderOf(path: string): string | undefined {
  return Object.keys(FOLDERS)
    .filter((folder) => path === folder || path.startsWith(`${folder}/`))
    .sort((a, b) => b.length - a.length)[0];
}

/** The path of lib/ an import names, or undefined for a package. */
function targetOf(file: string, specifier: string): string | undefined {
  if (specifier.startsWith('#lib/')) return specifier.slice(1);
  if (specifier.startsWith('.')) return posix.normalize(posix.join(posix.dirname(file), specifier));
  return undefined;
}

/** What breaks the rule in one file's imports: an arrow sideways, outward, or to a package not allowed. */
function violationsOf(file: string, specifiers: readonly string[]): string[] {
  const own = folderOf(file);
  if (own === undefined) return [`${file} is in no folder of the map`];
  const allowed = FOLDERS[own] ?? [];
  return specifiers
    .filter((specifier) => {
      // Across folders through the package's aliases, as the rest of the code does.
      if (LIB_FORBIDDEN.some((rule) => rule.test(specifier)) || specifier.startsWith('../')) return true;
      const target = targetOf(file, specifier);
      if (target === undefined) {
        if (specifier.startsWith('#')) return true;
        const packages = PACKAGES_ALLOWED[own];
        return packages !== undefined && !packages.some((rule) => rule.test(specifier));
      }
      const folder = folderOf(target);
      return folder === undefined || (folder !== own && !allowed.includes(folder));
    })
    .map((specifier) => `${file} imports ${specifier}`);
}

function sourcesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(ts|js)$/.test(file) && !file.endsWith('.d.ts'))
    .map((file) => posix.join(folder, file.split('\\').join('/')));
}

function foldersIn(folder: string): string[] {
  return readdirSync(join(ROOT, folder)).filter((name) => statSync(join(ROOT, folder, name)).isDirectory());
}

describe('one rule for every folder of lib/: imports point inward or to the shared ground', () => {
  it('finds static, type-only, side-effect and dynamic imports', () => {
    const source = `import type { A } from '#lib/domain/a';\nimport '@aws-sdk/x';\nexport { b } from './b';\nconst c = await import('#infra/c');`;
    expect(importsOf(source).sort()).toEqual(['#infra/c', '#lib/domain/a', './b', '@aws-sdk/x']);
  });

  it('refuses an arrow running back up, one running sideways between adapters, and a package in the core', () => {
    expect(violationsOf('lib/domain/session.ts', ['#lib/use-cases/create-session'])).toHaveLength(1);
    expect(violationsOf('lib/use-cases/x.ts', ['#lib/adapters/dynamodb/sessions'])).toHaveLength(1);
    expect(violationsOf('lib/definitions/x.ts', ['#lib/platform/config'])).toHaveLength(1);
    expect(violationsOf('lib/adapters/sqs/x.ts', ['#lib/adapters/dynamodb/table'])).toHaveLength(1);
    expect(violationsOf('lib/adapters/http/embed/x.ts', ['../../dynamodb/table'])).toHaveLength(1);
    expect(violationsOf('lib/adapters/http/embed/x.ts', ['../response'])).toHaveLength(1);
    expect(violationsOf('lib/use-cases/x.ts', ['@aws-sdk/client-sqs'])).toHaveLength(1);
    expect(violationsOf('lib/adapters/dynamodb/x.ts', ['#local/runtime'])).toHaveLength(1);
    expect(violationsOf('lib/newfolder/x.ts', [])).toHaveLength(1);
    // …and lets through what points inward, to the shared ground, or within one folder.
    expect(
      violationsOf('lib/adapters/http/embed/page.ts', [
        '#lib/adapters/http/response',
        '#lib/use-cases/open-embed-session',
        '#lib/platform/logger',
        '#lib/definitions/routes',
        '#lib/domain/errors',
        './html',
        'aws-lambda',
      ]),
    ).toEqual([]);
  });

  it('places every folder of lib/ in the map: a new folder fails until its ring is decided', () => {
    const unplaced = [
      ...foldersIn('lib')
        .filter((name) => name !== 'adapters')
        .map((name) => `lib/${name}`),
      ...foldersIn('lib/adapters').map((name) => `lib/adapters/${name}`),
    ].filter((folder) => !(folder in FOLDERS));
    expect(unplaced).toEqual([]);
    const loose = sourcesUnder('lib').filter((file) => folderOf(file) === undefined);
    expect(loose).toEqual([]);
  });

  for (const folder of Object.keys(FOLDERS)) {
    it(`${folder} imports only ${[folder, ...(FOLDERS[folder] ?? [])].join(', ')}`, () => {
      const files = sourcesUnder(folder);
      expect(files.length).toBeGreaterThan(0);
      const wrong = files.flatMap((file) =>
        violationsOf(file, importsOf(readFileSync(join(ROOT, file), 'utf8'))),
      );
      expect(wrong).toEqual([]);
    });
  }
});
