import { describe, expect, it } from 'vitest';
import { checkMetadata, checkWellFormed, MAX_METADATA_DEPTH } from '#lib/adapters/http/validation/metadata';
import { ValidationError } from '#lib/domain/errors';

describe('checkMetadata', () => {
  it('allows DynamoDB’s 32 levels of nesting', () => {
    expect(MAX_METADATA_DEPTH).toBe(32);
  });

  it('accepts an empty object within a 2-byte limit ("{}")', () => {
    expect(() => checkMetadata({}, 2)).not.toThrow();
    expect(() => checkMetadata({}, 1)).toThrow(ValidationError);
  });

  it('checks numbers and strings inside arrays, naming their path', () => {
    expect(() => checkMetadata({ a: [1, [2, 2 ** 60]] }, 1024)).toThrow(
      /^metadata\.a\[1\]\[1\] is an integer/,
    );
    expect(() => checkMetadata({ a: [{ b: 'ok' }, { c: '\ud800' }] }, 1024)).toThrow(
      'metadata.a[1].c contains invalid Unicode (a lone surrogate)',
    );
  });

  it('leaves null, booleans and nested empty containers alone', () => {
    expect(() => checkMetadata({ a: null, b: true, c: false, d: [], e: {} }, 1024)).not.toThrow();
  });

  it('does not overflow the stack on 100,000 levels of nesting', () => {
    const deep = JSON.parse(`{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`) as Record<string, unknown>;
    expect(() => checkMetadata(deep, 1_000_000)).toThrow('metadata must be nested at most 32 levels deep');
  });
});

describe('checkWellFormed', () => {
  it('names the path of a string with a lone surrogate', () => {
    expect(() => checkWellFormed('\ud800', 'plan')).toThrow(
      new ValidationError('plan contains invalid Unicode (a lone surrogate)'),
    );
    expect(() => checkWellFormed('😀', 'plan')).not.toThrow();
  });
});
