import { describe, expect, it } from 'vitest';
import { parseListSessionsQuery } from '#lib/adapters/http/validation/list-sessions';
import { parseRevokeUserSessionsRequest } from '#lib/adapters/http/validation/revoke-user-sessions';
import { ValidationError } from '#lib/domain/errors';

const multi = (query: Record<string, string>) =>
  Object.fromEntries(Object.entries(query).map(([key, value]) => [key, [value]]));
const parse = (query: Record<string, string> | null) => parseListSessionsQuery(query, query && multi(query));
const rejection = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as Error).message;
  }
  throw new Error('expected a ValidationError');
};

describe('parseListSessionsQuery', () => {
  it('reads every parameter, with limit 20 by default', () => {
    expect(parse({ userId: 'u' })).toEqual({ userId: 'u', limit: 20 });
    expect(parse({ userId: 'u', boardId: 'b', status: 'revoked', limit: '100', cursor: 'abc' })).toEqual({
      userId: 'u',
      boardId: 'b',
      status: 'revoked',
      limit: 100,
      cursor: 'abc',
    });
    expect(parse({ boardId: 'b', limit: '1' })).toEqual({ boardId: 'b', limit: 1 });
  });

  it.each<[Record<string, string> | null, string]>([
    [null, 'userId or boardId is required (or both)'],
    [{ status: 'active' }, 'userId or boardId is required (or both)'],
    ...['0', '101', '1.5', '-1', ''].map((limit): [Record<string, string>, string] => [
      { userId: 'u', limit },
      'limit must be an integer from 1 to 100',
    ]),
    [{ userId: 'u', status: 'ACTIVE' }, 'status must be one of active, expired, revoked'],
    [{ userId: 'u', order: 'asc' }, 'order is not an allowed query parameter'],
    [{ userId: '' }, 'userId must not be empty'],
    [{ boardId: '\t' }, 'boardId must not be blank'],
    [{ userId: 'x'.repeat(257) }, 'userId must be at most 256 characters'],
    [{ userId: 'u', cursor: '' }, 'cursor must not be empty'],
  ])('refuses %j: %s', (query, message) => {
    expect(rejection(() => parse(query))).toBe(message);
  });

  it('refuses a parameter given more than once', () => {
    expect(rejection(() => parseListSessionsQuery({ userId: 'b' }, { userId: ['a', 'b'] }))).toBe(
      'userId must be given once',
    );
  });
});

describe('parseRevokeUserSessionsRequest', () => {
  it('reads a user, a user on a board, or a board alone', () => {
    expect(parseRevokeUserSessionsRequest({ userId: 'u' })).toEqual({ userId: 'u' });
    expect(parseRevokeUserSessionsRequest({ boardId: 'b' })).toEqual({ boardId: 'b' });
    expect(parseRevokeUserSessionsRequest({ userId: 'u', boardId: 'b' })).toEqual({
      userId: 'u',
      boardId: 'b',
    });
  });

  it.each([
    [{}, 'userId or boardId is required (or both)'],
    [{ userId: 1 }, 'userId must be a string'],
    [{ boardId: ' ' }, 'boardId must not be blank'],
    [{ userId: 'u', boardId: null }, 'boardId must be a string'],
    [{ userId: 'u', status: 'x' }, 'status is not an allowed field'],
    [{ userId: ' ' }, 'userId must not be blank'],
    [{ userId: '\ud800' }, 'userId contains invalid Unicode (a lone surrogate)'],
  ])('refuses %j: %s', (body, message) => {
    expect(rejection(() => parseRevokeUserSessionsRequest(body))).toBe(message);
  });
});
