import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const FUNCTIONS = join(import.meta.dirname, '..', '..', '..', 'functions');

/**
 * The sessions table's change feed is a driving adapter, as lib/http is for the API: the stream's handler
 * calls it with the records Lambda hands over, and gets its repositories from the wiring like any other.
 */
const DRIVING_ADAPTERS = ['#lib/events/process', '#lib/events/stream'];

/** The DynamoDB adapters and the document client a source imports (the change feed's driving side aside). */
function adapterImports(source: string): string[] {
  return [...source.matchAll(/\bfrom\s+'(#lib\/dynamodb\/[^']+)'/g)]
    .map((match) => match[1] as string)
    .filter((specifier) => !DRIVING_ADAPTERS.includes(specifier));
}

describe('functions/wiring.ts: the one composition root of the handlers', () => {
  it('finds an adapter import, and no other', () => {
    expect(
      adapterImports(
        "import { DynamoBoardRepository } from '#lib/dynamodb/boards';\nimport { x } from '#lib/http/response';",
      ),
    ).toEqual(['#lib/dynamodb/boards']);
  });

  it('is where every handler gets its DynamoDB adapters: no handler imports one itself', () => {
    const handlers = readdirSync(FUNCTIONS).filter((file) => file.endsWith('.ts') && file !== 'wiring.ts');
    expect(handlers.length).toBeGreaterThan(5);
    const direct = handlers.flatMap((file) =>
      adapterImports(readFileSync(join(FUNCTIONS, file), 'utf8')).map(
        (spec) => `functions/${file} imports ${spec}`,
      ),
    );
    expect(direct).toEqual([]);
  });
});
