import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/**
 * Which imports each inner layer may use. The domain and the use cases must run with nothing but
 * their ports, so they may not reach an adapter, the SDK, the HTTP layer, the platform or the stack.
 */
const LAYERS = [
  { folder: 'lib/domain', allowed: [/^\.\/[^/]+$/, /^#lib\/domain\//, /^node:crypto$/] },
  {
    folder: 'lib/use-cases',
    allowed: [/^\.\/[^/]+$/, /^#lib\/domain\//, /^#lib\/use-cases\//, /^node:crypto$/],
  },
] as const;

/**
 * The descriptors (tables, routes, rate limits, gateway responses) are plain data read by the stack, the
 * local runtime and the OpenAPI builders (lib/api-reference): they import each other and the domain only.
 * The gateway responses take the headers and error body the handlers send from lib/http, so API Gateway's
 * own answers are the handlers' byte for byte.
 */
const DEFINITIONS_ALLOWED = [/^\.\/[^/]+$/, /^#lib\/domain\//];
const DEFINITIONS_EXCEPTIONS = [
  'lib/definitions/gateway-responses.ts imports #lib/http/response',
  'lib/definitions/gateway-responses.ts imports #lib/http/status',
];

/** Nothing in lib/ may depend on the deployment or the local runtime. */
const LIB_FORBIDDEN = [
  /^#infra\//,
  /^#local\//,
  /^#functions\//,
  /^#admin\//,
  /^aws-cdk-lib/,
  /^constructs$/,
];

/**
 * The platform layer (configuration, logger, clock) sits below the descriptors in lib/definitions, which
 * infra/ and local/ read: it may not import them, except the table descriptors, whose environment
 * variable names the configuration reads (plain data, importing nothing).
 */
const PLATFORM_ALLOWED_DEFINITIONS = ['#lib/definitions/tables'];

/** Every module specifier a TypeScript source imports or re-exports, static or dynamic. */
function importsOf(source: string): string[] {
  const specifiers: string[] = [];
  const patterns = [/\bfrom\s+'([^']+)'/g, /\bimport\s+'([^']+)'/g, /\bimport\(\s*'([^']+)'\s*\)/g];
  for (const pattern of patterns)
    for (const match of source.matchAll(pattern)) specifiers.push(match[1] ?? '');
  return specifiers;
}

function sourcesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(ts|js)$/.test(file) && !file.endsWith('.d.ts'))
    .map((file) => join(folder, file));
}

describe('layer boundaries', () => {
  it('finds static, type-only, side-effect and dynamic imports', () => {
    const source = `import type { A } from '#lib/domain/a';\nimport '@aws-sdk/x';\nexport { b } from './b';\nconst c = await import('#infra/c');`;
    expect(importsOf(source).sort()).toEqual(['#infra/c', '#lib/domain/a', './b', '@aws-sdk/x']);
  });

  for (const layer of LAYERS) {
    it(`${layer.folder} imports nothing outward (no adapter, SDK, HTTP, platform or infra)`, () => {
      const files = sourcesUnder(layer.folder);
      expect(files.length).toBeGreaterThan(0);
      const outward = files.flatMap((file) =>
        importsOf(readFileSync(join(ROOT, file), 'utf8'))
          .filter((spec) => !layer.allowed.some((rule) => rule.test(spec)))
          .map((spec) => `${file} imports ${spec}`),
      );
      expect(outward).toEqual([]);
    });
  }

  it('lib/definitions holds descriptors that import nothing above the domain (the OpenAPI builders live in lib/api-reference)', () => {
    const upward = sourcesUnder('lib/definitions').flatMap((file) =>
      importsOf(readFileSync(join(ROOT, file), 'utf8'))
        .filter((spec) => !DEFINITIONS_ALLOWED.some((rule) => rule.test(spec)))
        .map((spec) => `${file} imports ${spec}`),
    );
    expect(upward.filter((line) => !DEFINITIONS_EXCEPTIONS.includes(line))).toEqual([]);
  });

  it('lib/platform imports no definitions but the table descriptors (what only local/ needs lives there)', () => {
    const upward = sourcesUnder('lib/platform').flatMap((file) =>
      importsOf(readFileSync(join(ROOT, file), 'utf8'))
        .filter(
          (spec) => spec.startsWith('#lib/definitions/') && !PLATFORM_ALLOWED_DEFINITIONS.includes(spec),
        )
        .map((spec) => `${file} imports ${spec}`),
    );
    expect(upward).toEqual([]);
  });

  it('lib/ never imports the stack, the local runtime, the handlers or the CLI', () => {
    const offending = sourcesUnder('lib').flatMap((file) =>
      importsOf(readFileSync(join(ROOT, file), 'utf8'))
        .filter((spec) => LIB_FORBIDDEN.some((rule) => rule.test(spec)) || spec.startsWith('../'))
        .map((spec) => `${relative(ROOT, join(ROOT, file))} imports ${spec}`),
    );
    expect(offending).toEqual([]);
  });
});
