import type { APIGatewayProxyResult } from 'aws-lambda';
import { withRequestId } from '#lib/adapters/http/request-id';
import { jsonResponse } from '#lib/adapters/http/response';

/** GET /health: liveness only; it touches no table so it stays cheap and unauthenticated. */
export const handler = withRequestId(
  async (): Promise<APIGatewayProxyResult> => jsonResponse(200, { status: 'ok' }),
);
