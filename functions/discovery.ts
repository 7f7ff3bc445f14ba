import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { apiBaseUrl } from '#lib/adapters/http/api-gateway';
import { discoveryResponse, JWKS_PATH, jwks, openIdConfiguration } from '#lib/adapters/http/embed/discovery';
import { httpErrors } from '#lib/adapters/http/middlewares/http-errors';
import { withRequestBudget } from '#lib/adapters/http/middlewares/request-budget';
import { environmentOf } from '#lib/definitions/environment';
import { readDiscoveryConfig } from '#lib/platform/config';
import { createLogger } from '#lib/platform/logger';
import { publishedKeys } from './wiring';

const config = readDiscoveryConfig(environmentOf('discovery', process.env));
const keySet = publishedKeys(config.keys);
const logger = createLogger({ function: 'discovery' });

/**
 * GET /.well-known/openid-configuration and GET /.well-known/jwks.json: public, cacheable, any origin.
 * The JWKS reads the keyring's public halves (DynamoDB, once a minute at most per environment), within
 * the request budget of every function that uses DynamoDB.
 */
export const handler = withRequestBudget(middy<APIGatewayProxyEvent, APIGatewayProxyResult>())
  .use(httpErrors({ logger }))
  .handler(async (event) => {
    if (event.resource === JWKS_PATH) return discoveryResponse(jwks(await (await keySet()).publicKeys()));
    return discoveryResponse(openIdConfiguration(config.publicBaseUrl ?? apiBaseUrl(event)));
  });
