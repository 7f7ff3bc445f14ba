import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { serveReference } from '#lib/adapters/http/api-reference/serve';
import { httpErrors } from '#lib/adapters/http/middlewares/http-errors';
import { withRequestId } from '#lib/adapters/http/request-id';
import { createLogger } from '#lib/platform/logger';

const logger = createLogger({ function: 'docs' });

/** GET /openapi.json, GET /docs and GET /docs/{asset}: the API's description, readable by people and tools. */
export const handler = withRequestId(middy<APIGatewayProxyEvent, APIGatewayProxyResult>())
  .use(httpErrors({ logger }))
  .handler(async (event) => serveReference(event));
