import { keyOwnerOf, pathParameter } from '#lib/adapters/http/api-gateway';
import { jsonApiHandler } from '#lib/adapters/http/handler';
import { jsonResponse } from '#lib/adapters/http/response';
import { environmentOf } from '#lib/definitions/environment';
import { revokeSession } from '#lib/use-cases/manage-session';
import { manageSessionDeps } from './wiring';

const deps = manageSessionDeps(environmentOf('revokeSession', process.env));

/** POST /api/embed/sessions/{id}/revoke: no body is read, so none is needed. */
export const handler = jsonApiHandler('revoke-session', {}, async (event) => {
  const session = await revokeSession(deps, keyOwnerOf(event), pathParameter(event, 'id'));
  return jsonResponse(200, { session });
});
