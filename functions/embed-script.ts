import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { hostScriptResponse } from '#lib/embed/host-script';
import { withRequestId } from '#lib/http/request-id';

/** GET /embed.js: the host pages' embedding script; static, so it touches no table and needs no middleware. */
export const handler = withRequestId(
  async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => hostScriptResponse(event),
);
