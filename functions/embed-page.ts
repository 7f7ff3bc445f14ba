import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { apiBaseUrl } from '#lib/adapters/http/api-gateway';
import { ENDED_VIEW_PATH, endedViewResponse } from '#lib/adapters/http/embed/ended';
import { handOffResponse } from '#lib/adapters/http/embed/handoff';
import { bindingCookieValues, embedErrorRenderer, embedPageResponse } from '#lib/adapters/http/embed/http';
import { headWithoutBody } from '#lib/adapters/http/middlewares/head-without-body';
import { httpErrors } from '#lib/adapters/http/middlewares/http-errors';
import { withRequestBudget } from '#lib/adapters/http/middlewares/request-budget';
import { withRequestId } from '#lib/adapters/http/request-id';
import { environmentOf } from '#lib/definitions/environment';
import { readEmbedPageConfig } from '#lib/platform/config';
import { createLogger } from '#lib/platform/logger';
import { cryptoRandom, systemClock } from '#lib/platform/system';
import { boardAppUrlOf, handOff } from '#lib/use-cases/hand-off';
import { openEmbedSession } from '#lib/use-cases/open-embed-session';
import { idTokenPorts, openEmbedSessionDeps } from './wiring';

const config = readEmbedPageConfig(environmentOf('embedPage', process.env));
const deps = openEmbedSessionDeps(config);
const logger = createLogger({ function: 'embed-page' });
const handOffKeys = idTokenPorts(config.idTokenKeys);

/**
 * GET /embed?token=…: the embedded board, or a styled error page (JSON when asked for). HEAD: the same
 * answer without its body, and without binding a link to a browser. GET /embed/ended: the view after a
 * session ended, which reads nothing.
 */
export const handler = withRequestId(withRequestBudget(middy<APIGatewayProxyEvent, APIGatewayProxyResult>()))
  .use(headWithoutBody())
  .use(
    httpErrors({
      logger,
      render: (request) => embedErrorRenderer(request.event, config.frameAncestors, request.error),
    }),
  )
  .handler(async (event) => {
    if (event.resource === ENDED_VIEW_PATH) return endedViewResponse(event, config.frameAncestors);
    const view = await openEmbedSession(
      deps,
      event.queryStringParameters?.token,
      bindingCookieValues(event),
      {
        peek: event.httpMethod === 'HEAD',
      },
    );
    // A board with an application of its own: hand the verified user to it with a signed ID token
    // (for HEAD too, so its headers are GET's; headWithoutBody drops the token with the body).
    const appUrl = boardAppUrlOf(view.board, config.boardAppUrl, config.appUrlRule);
    if (appUrl !== undefined) {
      const keys = await handOffKeys();
      const issuer = config.publicBaseUrl ?? apiBaseUrl(event);
      const handoff = await handOff(
        { signer: keys, subjects: keys, clock: systemClock, random: cryptoRandom },
        view,
        { issuer, appUrl },
      );
      return handOffResponse(event, view, handoff, { frameAncestors: config.frameAncestors });
    }
    return embedPageResponse(event, view, { frameAncestors: config.frameAncestors, now: systemClock.now() });
  });
