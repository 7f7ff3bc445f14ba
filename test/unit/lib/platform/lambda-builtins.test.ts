import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import nodeProcess, * as nodeProcessModule from 'node:process';
import { describe, expect, it } from 'vitest';
import * as eventStreams from '#lib/platform/lambda-event-streams';
import lambdaProcess, * as lambdaProcessModule from '#lib/platform/lambda-process';

const require = createRequire(import.meta.url);

describe('lambda-process (node:process in the Lambda bundles)', () => {
  it('gives the same objects as node:process for every name it exports', () => {
    expect(lambdaProcess).toBe(nodeProcess);
    for (const [name, value] of Object.entries(lambdaProcessModule)) {
      if (name === 'default') continue;
      expect(value, name).toBe((nodeProcessModule as unknown as Record<string, unknown>)[name]);
    }
  });

  it('sees a variable set after it was loaded, as the SDK reads AWS_* settings late', () => {
    process.env.LAMBDA_PROCESS_TEST = 'late';
    try {
      expect(lambdaProcessModule.env.LAMBDA_PROCESS_TEST).toBe('late');
    } finally {
      delete process.env.LAMBDA_PROCESS_TEST;
    }
  });
});

describe('lambda-event-streams (@smithy/core/event-streams in the Lambda bundles)', () => {
  it('exports every name the SDK’s HTTP protocol reads from the package (a dynamic import the build cannot check)', () => {
    // Every ES-module file of @smithy/core (what esbuild bundles), searched for imports of the package.
    const root = join(dirname(require.resolve('@smithy/core')), '..', 'dist-es');
    const sources = readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.js'))
      .map((file) => readFileSync(join(root, file), 'utf8'));
    const imports = sources.flatMap((source) => [
      ...source.matchAll(/\{([^{}]*)\}\s*=\s*await import\("@smithy\/core\/event-streams"\)/g),
    ]);
    expect(sources.filter((source) => /from "@smithy\/core\/event-streams"/.test(source))).toEqual([]);
    expect(imports).toHaveLength(1);
    const names = (imports[0]?.[1] ?? '').split(',').map((name) => name.trim());
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => !(name in eventStreams))).toEqual([]);
  });

  it('fails with the reason when an event stream is ever asked for', () => {
    expect(() => new eventStreams.EventStreamSerde()).toThrow(eventStreams.NO_EVENT_STREAMS_MESSAGE);
    expect(() => eventStreams.eventStreamSerdeProvider()).toThrow(eventStreams.NO_EVENT_STREAMS_MESSAGE);
  });

  it('stands in for a package DynamoDB never needs: no operation of the client has an event-stream member', () => {
    const schemas = readFileSync(
      require.resolve('@aws-sdk/client-dynamodb/dist-es/schemas/schemas_0.js'),
      'utf8',
    );
    // The generated schemas name a trait by a string constant; an event-stream member is a union with the
    // `streaming` trait (NormalizedSchema.isStreaming), so the constant would be there.
    expect(schemas).toMatch(/"sensitive"|"idempotencyToken"|= \[\d/);
    expect(schemas).not.toMatch(/["']streaming["']/);
  });
});
