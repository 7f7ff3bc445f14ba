import { environmentOf } from '#lib/definitions/environment';
import { keyOwnerOf, pathParameter } from '#lib/http/api-gateway';
import { jsonApiHandler } from '#lib/http/handler';
import { jsonResponse } from '#lib/http/response';
import { getSession } from '#lib/use-cases/manage-session';
import { manageSessionDeps } from './wiring';

const deps = manageSessionDeps(environmentOf('getSession', process.env));

/** GET /api/embed/sessions/{id} */
export const handler = jsonApiHandler('get-session', {}, async (event) => {
  const session = await getSession(deps, keyOwnerOf(event), pathParameter(event, 'id'));
  return jsonResponse(200, { session });
});
