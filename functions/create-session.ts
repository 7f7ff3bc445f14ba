import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { DynamoBoardRepository } from '#lib/dynamodb/boards';
import { createDocumentClient } from '#lib/dynamodb/client';
import { DynamoMembershipRepository } from '#lib/dynamodb/memberships';
import { DynamoSessionRepository } from '#lib/dynamodb/sessions';
import { apiBaseUrl, keyOwnerOf } from '#lib/http/api-gateway';
import { httpErrors } from '#lib/http/middlewares/http-errors';
import { jsonBody } from '#lib/http/middlewares/json-body';
import { withRequestBudget } from '#lib/http/middlewares/request-budget';
import { jsonResponse } from '#lib/http/response';
import { readCreateSessionConfig } from '#lib/platform/config';
import { createLogger } from '#lib/platform/logger';
import { cryptoRandom, systemClock } from '#lib/platform/system';
import { type CreateSessionDeps, createSession } from '#lib/use-cases/create-session';
import { parseCreateSessionRequest } from '#lib/validation/create-session';

const config = readCreateSessionConfig(process.env);
const db = createDocumentClient(config.dynamo);
const deps: CreateSessionDeps = {
  boards: new DynamoBoardRepository(db, config.tables.boards),
  memberships: new DynamoMembershipRepository(db, config.tables.memberships),
  sessions: new DynamoSessionRepository(db, config.tables.sessions),
  clock: systemClock,
  random: cryptoRandom,
};
const logger = createLogger({ function: 'create-session' });

/** POST /api/embed/sessions */
export const handler = withRequestBudget(middy<APIGatewayProxyEvent, APIGatewayProxyResult>())
  .use(httpErrors({ logger }))
  .use(jsonBody({ maxBytes: config.maxBodyBytes }))
  .handler(async (event) => {
    const created = await createSession(deps, {
      keyOwnerId: keyOwnerOf(event).userId,
      request: parseCreateSessionRequest(event.body as unknown, config),
      baseUrl: config.publicBaseUrl ?? apiBaseUrl(event),
    });
    return jsonResponse(201, created);
  });
