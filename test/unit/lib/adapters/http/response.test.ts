import { describe, expect, it } from 'vitest';
import { API_HEADERS, headerValue, jsonError, jsonResponse } from '#lib/adapters/http/response';
import { errorBody, statusName } from '#lib/adapters/http/status';

describe('jsonResponse', () => {
  it('serializes the body and sends JSON that may not be stored', () => {
    expect(jsonResponse(201, { a: 1 })).toEqual({
      statusCode: 201,
      headers: {
        'Content-Type': 'application/json',
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
      },
      body: '{"a":1}',
    });
  });

  it('adds extra headers without dropping the house headers', () => {
    const { headers } = jsonResponse(503, {}, { 'Retry-After': '2' });
    expect(headers).toEqual({ ...API_HEADERS, 'Retry-After': '2' });
  });

  it('cannot have its shared headers changed by a caller', () => {
    expect(Object.isFrozen(API_HEADERS)).toBe(true);
    const first = jsonResponse(200, {});
    (first.headers as Record<string, string>)['Cache-Control'] = 'public';
    expect(jsonResponse(200, {}).headers?.['Cache-Control']).toBe('no-store');
  });
});

describe('jsonError', () => {
  it('answers {error: <status name>, message} with the house headers', () => {
    const result = jsonError(404, 'Board "b" was not found');
    expect(result.statusCode).toBe(404);
    expect(result.headers).toMatchObject({ 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
    expect(JSON.parse(result.body)).toEqual({ error: 'Not Found', message: 'Board "b" was not found' });
  });
});

describe('statusName and errorBody', () => {
  it.each([
    [400, 'Bad Request'],
    [401, 'Unauthorized'],
    [403, 'Forbidden'],
    [404, 'Not Found'],
    [413, 'Payload Too Large'],
    [415, 'Unsupported Media Type'],
    [500, 'Internal Server Error'],
    [503, 'Service Unavailable'],
  ])('names %i "%s"', (status, name) => {
    expect(statusName(status)).toBe(name);
    expect(errorBody(status, 'm')).toEqual({ error: name, message: 'm' });
  });

  it('falls back to a generic name for an unlisted status', () => {
    expect(statusName(599)).toBe('Internal Server Error');
    expect(statusName(418)).toBe('Bad Request');
  });
});

describe('headerValue', () => {
  it('finds a header whatever the case of its name', () => {
    const headers = { 'CoNtEnT-TyPe': 'application/json', Authorization: 'Bearer x' };
    expect(headerValue(headers, 'content-type')).toBe('application/json');
    expect(headerValue(headers, 'AUTHORIZATION')).toBe('Bearer x');
  });

  it('returns undefined for a missing header or missing headers', () => {
    expect(headerValue({ a: 'b' }, 'content-type')).toBeUndefined();
    expect(headerValue(null, 'content-type')).toBeUndefined();
    expect(headerValue(undefined, 'content-type')).toBeUndefined();
  });
});
