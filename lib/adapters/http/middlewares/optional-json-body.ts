import type middy from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { boundedRawBody, jsonBody } from './json-body';

/**
 * The body of a route where a body is optional: none, an empty one or one of only whitespace is absent
 * (`event.body` becomes null, and no Content-Type is asked for); any other is checked and parsed as
 * `jsonBody` does. A client that sends a blank line means "no options", not a malformed object.
 */
export function optionalJsonBody(options: { maxBytes: number }): middy.MiddlewareObj<APIGatewayProxyEvent> {
  const parse = jsonBody(options);
  return {
    before: (request) => {
      const event = request.event;
      // Whitespace is no body, but it is still bytes the request sent: the limit holds for it too.
      if (boundedRawBody(event, options.maxBytes).trim() !== '') return parse.before?.(request);
      event.body = null;
      event.isBase64Encoded = false;
    },
  };
}
