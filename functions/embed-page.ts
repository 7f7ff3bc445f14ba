import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { DynamoBoardRepository } from '#lib/dynamodb/boards';
import { createDocumentClient } from '#lib/dynamodb/client';
import { DynamoSessionRepository } from '#lib/dynamodb/sessions';
import { bindingCookieValues, embedErrorRenderer, embedPageResponse } from '#lib/embed/http';
import { headWithoutBody } from '#lib/http/middlewares/head-without-body';
import { httpErrors } from '#lib/http/middlewares/http-errors';
import { withRequestBudget } from '#lib/http/middlewares/request-budget';
import { readEmbedPageConfig } from '#lib/platform/config';
import { createLogger } from '#lib/platform/logger';
import { cryptoRandom, systemClock, timerSleep } from '#lib/platform/system';
import {
  DEFAULT_MISS_RETRY_DELAYS_MS,
  type OpenEmbedSessionDeps,
  openEmbedSession,
} from '#lib/use-cases/open-embed-session';

const config = readEmbedPageConfig(process.env);
const db = createDocumentClient(config.dynamo);
const deps: OpenEmbedSessionDeps = {
  sessions: new DynamoSessionRepository(db, config.tables.sessions),
  boards: new DynamoBoardRepository(db, config.tables.boards),
  clock: systemClock,
  sleep: timerSleep,
  random: cryptoRandom,
  missRetryDelaysMs: DEFAULT_MISS_RETRY_DELAYS_MS,
};
const logger = createLogger({ function: 'embed-page' });

/**
 * GET /embed?token=…: the embedded board, or a styled error page (JSON when asked for). HEAD: the same
 * answer without its body, and without binding a link to a browser.
 */
export const handler = withRequestBudget(middy<APIGatewayProxyEvent, APIGatewayProxyResult>())
  .use(headWithoutBody())
  .use(
    httpErrors({
      logger,
      render: (request) => embedErrorRenderer(request.event, config.frameAncestors, request.error),
    }),
  )
  .handler(async (event) => {
    const view = await openEmbedSession(
      deps,
      event.queryStringParameters?.token,
      bindingCookieValues(event),
      {
        peek: event.httpMethod === 'HEAD',
      },
    );
    return embedPageResponse(event, view, { frameAncestors: config.frameAncestors, now: systemClock.now() });
  });
