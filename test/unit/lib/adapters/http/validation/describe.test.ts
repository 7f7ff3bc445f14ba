import type { ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { describeSchemaError } from '#lib/adapters/http/validation/describe';

/** An ajv error as the generated validators report it: no `message` (they are built without). */
const error = (keyword: string, instancePath: string, params: Record<string, unknown>): ErrorObject => ({
  keyword,
  instancePath,
  schemaPath: `#/properties${instancePath}/${keyword}`,
  params,
});

describe('describeSchemaError', () => {
  it.each([
    [error('required', '', { missingProperty: 'email' }), 'email is required'],
    [error('additionalProperties', '', { additionalProperty: 'x' }), 'x is not an allowed field'],
    [error('type', '/plan', { type: 'string,null' }), 'plan must be a string or null'],
    [error('minLength', '/userId', { limit: 1 }), 'userId must not be empty'],
    [error('maxLength', '/email', { limit: 254 }), 'email must be at most 254 characters'],
    [error('minimum', '/seats', { limit: 1 }), 'seats must be at least 1'],
    [error('maximum', '/seats', { limit: 9 }), 'seats must be at most 9'],
    [
      error('enum', '/status', { allowedValues: ['active', 'revoked'] }),
      'status must be one of active, revoked',
    ],
    [error('pattern', '/email', { pattern: '.' }), 'email must be a valid e-mail address'],
    [error('const', '/odd', { allowedValue: 1 }), 'odd is invalid'],
  ])('writes its sentence from the keyword and params alone: %#', (schemaError, sentence) => {
    expect(describeSchemaError(schemaError)).toBe(sentence);
  });

  it('names an unknown query parameter as one', () => {
    expect(
      describeSchemaError(error('additionalProperties', '', { additionalProperty: 'q' }), 'query parameter'),
    ).toBe('q is not an allowed query parameter');
  });
});
