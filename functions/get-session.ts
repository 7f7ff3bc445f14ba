import { keyOwnerOf, pathParameter } from '#lib/adapters/http/api-gateway';
import { jsonApiHandler } from '#lib/adapters/http/handler';
import { jsonResponse } from '#lib/adapters/http/response';
import { environmentOf } from '#lib/definitions/environment';
import { getSession } from '#lib/use-cases/manage-session';
import { manageSessionDeps } from './wiring';

const deps = manageSessionDeps(environmentOf('getSession', process.env));

/** GET /api/embed/sessions/{id} */
export const handler = jsonApiHandler('get-session', {}, async (event) => {
  const session = await getSession(deps, keyOwnerOf(event), pathParameter(event, 'id'));
  return jsonResponse(200, { session });
});
