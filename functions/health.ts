import type { APIGatewayProxyResult } from 'aws-lambda';
import { jsonResponse } from '#lib/http/response';

/** GET /health: liveness only; it touches no table so it stays cheap and unauthenticated. */
export const handler = async (): Promise<APIGatewayProxyResult> => jsonResponse(200, { status: 'ok' });
