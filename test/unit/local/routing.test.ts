import { describe, expect, it } from 'vitest';
import type { RouteDefinition } from '#lib/definitions/routes';
import { resolveResource } from '#local/routing';

const route = (method: 'GET' | 'POST', path: string): RouteDefinition => ({
  method,
  path,
  function: 'health',
  auth: 'none',
});
const ROUTES = [
  route('POST', '/sessions'),
  route('GET', '/sessions'),
  route('GET', '/sessions/{id}'),
  route('POST', '/sessions/{id}/revoke'),
  route('POST', '/sessions/revoke'),
];

describe('resolveResource', () => {
  it('finds a literal resource with all its methods and no path parameters', () => {
    expect(resolveResource(ROUTES, '/sessions')).toEqual({
      path: '/sessions',
      routes: [ROUTES[0], ROUTES[1]],
      pathParameters: null,
    });
  });

  it('binds a parameter segment, URL-decoded', () => {
    expect(resolveResource(ROUTES, '/sessions/a%2Fb%20c')).toMatchObject({
      path: '/sessions/{id}',
      pathParameters: { id: 'a/b c' },
    });
  });

  it('prefers a literal segment to a parameter wherever they compete', () => {
    expect(resolveResource(ROUTES, '/sessions/revoke')?.path).toBe('/sessions/revoke');
    expect(resolveResource(ROUTES, '/sessions/revoke/revoke')?.path).toBe('/sessions/{id}/revoke');
  });

  it('matches nothing for an empty segment, an extra segment or malformed encoding', () => {
    expect(resolveResource(ROUTES, '/sessions/')).toBeUndefined();
    expect(resolveResource(ROUTES, '/sessions/x/revoke/y')).toBeUndefined();
    expect(resolveResource(ROUTES, '/sessions/%zz')).toBeUndefined();
    expect(resolveResource(ROUTES, '/other')).toBeUndefined();
  });
});
