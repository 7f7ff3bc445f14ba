import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const FUNCTIONS = join(ROOT, 'functions');
const LIB = join(ROOT, 'lib');

/**
 * The adapters a handler is handed by functions/wiring.ts, never builds: every module that implements a
 * port with a technology (DynamoDB, KMS, SQS, EventBridge, API Gateway, outbound HTTP, timers, the read
 * cache). A folder ends in `/`.
 */
const DRIVEN_ADAPTERS = [
  '#lib/adapters/dynamodb/',
  '#lib/adapters/signing/',
  '#lib/adapters/api-gateway/',
  '#lib/adapters/cache/',
  '#lib/adapters/eventbridge/event-bus',
  '#lib/adapters/outbound-http/destination-post',
  '#lib/adapters/timers/local-scheduler',
];

/**
 * Driving adapters, which a handler calls with what Lambda hands over (as API handlers call lib/adapters/http):
 * the sessions table's change feed and the delivery queue's consumer. They get their repositories from
 * the wiring like any handler.
 */
const DRIVING_ADAPTERS = [
  '#lib/adapters/dynamodb/change-feed',
  '#lib/adapters/dynamodb/stream-records',
  '#lib/adapters/sqs/delivery-queue',
];

/** The composition root: wiring.ts, and keys.ts, where it makes the keys that sign. */
const COMPOSITION_ROOT = ['wiring.ts', 'keys.ts'];

const isAdapter = (specifier: string): boolean =>
  !DRIVING_ADAPTERS.includes(specifier) &&
  DRIVEN_ADAPTERS.some((adapter) =>
    adapter.endsWith('/') ? specifier.startsWith(adapter) : specifier === adapter,
  );

/**
 * The driven adapters a source imports as values, statically or with `import()` (a type import builds
 * nothing).
 */
function adapterImports(source: string): string[] {
  return [
    ...source.matchAll(
      /^import\s+(?!type\s)[^;]*?\bfrom\s+'(#lib\/[^']+)'|\bimport\(\s*'(#lib\/[^']+)'\s*\)/gms,
    ),
  ]
    .map((match) => (match[1] ?? match[2]) as string)
    .filter(isAdapter);
}

/** Every module of lib/, as the specifier a handler would import it by. */
function libModules(dir = LIB): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return libModules(path);
    if (!entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) return [];
    return [`#lib/${relative(LIB, path).replace(/\.ts$/, '')}`];
  });
}

/** Whether a source has a class implementing an interface of lib/domain/ports.ts. */
function implementsAPort(source: string): boolean {
  const ports = [
    ...source.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'#lib\/domain\/ports'/g),
  ].flatMap((match) => (match[1] as string).split(',').map((name) => name.replace(/^\s*type\s+/, '').trim()));
  return [...source.matchAll(/\bimplements\s+([^{]+)\{/g)].some((match) =>
    (match[1] as string).split(',').some((name) => ports.includes(name.replace(/<.*$/, '').trim())),
  );
}

describe('functions/wiring.ts: the one composition root of the handlers', () => {
  it('finds an adapter imported as a value, of any technology, and nothing else', () => {
    expect(
      adapterImports(
        [
          "import { DynamoBoardRepository } from '#lib/adapters/dynamodb/boards';",
          "import { KmsKeyEncryption } from '#lib/adapters/signing/kms-key-encryption';",
          "import { EventBusSink } from '#lib/adapters/eventbridge/event-bus';",
          "import type { RotationResult } from '#lib/adapters/signing/keyring-keys';",
          "import { handleDeliveryBatch } from '#lib/adapters/sqs/delivery-queue';",
          "import { x } from '#lib/adapters/http/response';",
          "const { kmsClient } = await import('#lib/adapters/signing/kms-client');",
          "const { y } = await import('#lib/adapters/http/response');",
        ].join('\n'),
      ),
    ).toEqual([
      '#lib/adapters/dynamodb/boards',
      '#lib/adapters/signing/kms-key-encryption',
      '#lib/adapters/eventbridge/event-bus',
      '#lib/adapters/signing/kms-client',
    ]);
  });

  it('knows every adapter: each module that calls AWS or implements a port is listed as one', () => {
    const unlisted = libModules().filter((specifier) => {
      if (specifier.startsWith('#lib/platform/') || specifier.startsWith('#lib/domain/')) return false;
      if (isAdapter(specifier) || DRIVING_ADAPTERS.includes(specifier)) return false;
      const source = readFileSync(join(LIB, `${specifier.slice('#lib/'.length)}.ts`), 'utf8');
      const callsAws = /from '@aws-sdk\//.test(source);
      return callsAws || implementsAPort(source);
    });
    expect(unlisted).toEqual([]);
  });

  it('is where every handler gets its adapters: no handler builds one itself', () => {
    const handlers = readdirSync(FUNCTIONS).filter(
      (file) => file.endsWith('.ts') && !COMPOSITION_ROOT.includes(file),
    );
    expect(handlers.length).toBeGreaterThan(5);
    const direct = handlers.flatMap((file) =>
      adapterImports(readFileSync(join(FUNCTIONS, file), 'utf8')).map(
        (spec) => `functions/${file} imports ${spec}`,
      ),
    );
    expect(direct).toEqual([]);
  });
});
