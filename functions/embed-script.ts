import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { boardScriptResponse } from '#lib/adapters/http/embed/board-script';
import { hostScriptResponse } from '#lib/adapters/http/embed/host-script';
import { withRequestId } from '#lib/adapters/http/request-id';

/**
 * GET /embed.js, the host pages' embedding script, and GET /embed-board.js, the board applications'
 * script; static, so they touch no table and need no middleware.
 */
export const handler = withRequestId(
  async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> =>
    event.resource === '/embed-board.js' ? boardScriptResponse() : hostScriptResponse(event),
);
