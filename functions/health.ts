import type { APIGatewayProxyResult } from 'aws-lambda';
import { withRequestId } from '#lib/http/request-id';
import { jsonResponse } from '#lib/http/response';

/** GET /health: liveness only; it touches no table so it stays cheap and unauthenticated. */
export const handler = withRequestId(
  async (): Promise<APIGatewayProxyResult> => jsonResponse(200, { status: 'ok' }),
);
