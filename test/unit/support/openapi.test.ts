import { describe, expect, it } from 'vitest';
import { expectDocumentedResponse, type ObservedResponse } from '#test/support/openapi';

function answered(status: number, path: string, body: unknown, method = 'GET'): ObservedResponse {
  return {
    method,
    path,
    status,
    headers: new Headers({ 'content-type': 'application/json' }),
    text: JSON.stringify(body),
  };
}

describe('the OpenAPI response check the HTTP tests run on every answer', () => {
  it('accepts an error body in the documented shape, on a path the document does not know', () => {
    expect(() =>
      expectDocumentedResponse(answered(404, '/nowhere', { error: 'Not Found', message: 'no route' })),
    ).not.toThrow();
  });

  it('rejects an error body the schema does not allow, each time it is seen', () => {
    // Twice: the second check reads the schema Ajv compiled for the first, and must still refuse.
    for (let seen = 0; seen < 2; seen++) {
      expect(() => expectDocumentedResponse(answered(404, '/nowhere', { error: 'Not Found' }))).toThrow(
        /message/,
      );
    }
  });

  it('rejects a documented route’s body that is not in its schema', () => {
    const body = { sessionId: 'not enough' };
    expect(() => expectDocumentedResponse(answered(200, '/api/embed/sessions/s_1', body))).toThrow(
      /must have required property/,
    );
  });

  it('rejects a status the route does not document', () => {
    expect(() => expectDocumentedResponse(answered(418, '/health', {}))).toThrow(
      /not in the OpenAPI document/,
    );
  });
});
