import middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { allowPolicy } from '#lib/adapters/http/api-gateway';
import { authorizerErrors } from '#lib/adapters/http/middlewares/authorizer-errors';
import { withRequestBudget } from '#lib/adapters/http/middlewares/request-budget';
import { environmentOf } from '#lib/definitions/environment';
import { readAuthorizerConfig } from '#lib/platform/config';
import { createLogger } from '#lib/platform/logger';
import { authorizeApiKey } from '#lib/use-cases/authorize-api-key';
import { authorizerDeps } from './wiring';

const config = readAuthorizerConfig(environmentOf('authorizer', process.env));
const deps = authorizerDeps(config);
const logger = createLogger({ function: 'authorizer' });

/** TOKEN authorizer for API-key routes. */
export const handler = withRequestBudget(middy<APIGatewayTokenAuthorizerEvent, APIGatewayAuthorizerResult>())
  .use(authorizerErrors({ logger }))
  .handler(async (event) =>
    allowPolicy(await authorizeApiKey(deps, event.authorizationToken), event.methodArn),
  );
