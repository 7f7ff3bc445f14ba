import { describe, expect, it } from 'vitest';
import { uncalledRoutes } from './route-coverage';

describe('the route coverage of an assembly run', () => {
  it('names each method of the template that no request reached, in order', () => {
    const methods = ['POST /api/embed/webhooks', 'GET /health', 'DELETE /api/embed/webhooks/{id}'];
    expect(uncalledRoutes(methods, ['GET /health'])).toEqual([
      'DELETE /api/embed/webhooks/{id}',
      'POST /api/embed/webhooks',
    ]);
  });

  it('names nothing when every method was reached, whatever else was called', () => {
    expect(uncalledRoutes(['GET /health'], ['GET /health', 'GET /elsewhere'])).toEqual([]);
  });
});
