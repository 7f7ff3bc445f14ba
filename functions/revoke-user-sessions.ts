import { keyOwnerOf } from '#lib/adapters/http/api-gateway';
import { jsonApiHandler } from '#lib/adapters/http/handler';
import { jsonBody } from '#lib/adapters/http/middlewares/json-body';
import { jsonResponse } from '#lib/adapters/http/response';
import { parseRevokeUserSessionsRequest } from '#lib/adapters/http/validation/revoke-user-sessions';
import { environmentOf } from '#lib/definitions/environment';
import { revokeUserSessions } from '#lib/use-cases/revoke-user-sessions';
import { revokeUserSessionsDeps } from './wiring';

const deps = revokeUserSessionsDeps(environmentOf('revokeUserSessions', process.env));
/** The body holds two ids; anything near this size is not a revoke request. */
const MAX_BODY_BYTES = 16 * 1024;

/** POST /api/embed/sessions/revoke with {"userId", "boardId"?} or {"boardId"} */
export const handler = jsonApiHandler(
  'revoke-user-sessions',
  {
    inner: [jsonBody({ maxBytes: MAX_BODY_BYTES })],
    // Its writes are a few whatever the sessions, but its count reads them all: bounded by the house
    // Lambda timeout (lib/definitions/routes.ts) less the reserve for the 503, not by the 5 s of the other
    // routes. Its first cut-off is written before the count, so running out of time revokes all the same.
    budgetMs: Number.POSITIVE_INFINITY,
  },
  async (event) => {
    const command = parseRevokeUserSessionsRequest(event.body as unknown);
    return jsonResponse(200, await revokeUserSessions(deps, keyOwnerOf(event), command));
  },
);
