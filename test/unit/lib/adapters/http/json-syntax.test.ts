import { describe, expect, it } from 'vitest';
import { jsonSyntaxErrorOffset, lineAndColumn } from '#lib/adapters/http/json-syntax';

describe('jsonSyntaxErrorOffset', () => {
  it.each([
    '{}',
    '[]',
    ' {"a": [1, -2.5e3, true, false, null, "x\\n\\u00e9"], "b": {"c": []}} ',
    '"text"',
    '0',
  ])('finds no error in valid JSON: %s', (text) => {
    expect(() => JSON.parse(text)).not.toThrow();
    expect(jsonSyntaxErrorOffset(text)).toBeUndefined();
  });

  it.each([
    ['{"a":1,}', 7],
    ['{"a" 1}', 5],
    ['{a:1}', 1],
    ['[1,2', 4],
    ['', 0],
    ['{"a":tru}', 5],
    ['[1] x', 4],
    ['[,1]', 1],
    ['01', 1],
    ['{"a":"\u0001"}', 6],
  ])('points at the first character that cannot continue %j: %i', (text, offset) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(jsonSyntaxErrorOffset(text)).toBe(offset);
  });

  it('survives any nesting depth', () => {
    expect(jsonSyntaxErrorOffset('['.repeat(200_000))).toBe(200_000);
  });

  it('counts lines and columns from 1', () => {
    expect(lineAndColumn('{\n  "a": 1\n  "b"', 13)).toEqual({ line: 3, column: 3 });
  });
});
