import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

/**
 * `HEAD` on a route that also answers `GET`: the handler answers as for `GET` (the handler itself must
 * leave out side effects), and this drops the body, of an error answer too. Register it before the error
 * mapper, so that it sees the final answer.
 */
export function headWithoutBody(): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  const strip = async (request: middy.Request<APIGatewayProxyEvent, APIGatewayProxyResult>) => {
    if (request.event.httpMethod !== 'HEAD' || !request.response) return;
    request.response = { ...request.response, body: '' };
  };
  return { after: strip, onError: strip };
}
