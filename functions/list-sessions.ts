import { environmentOf } from '#lib/definitions/environment';
import { apiKeyOf, keyOwnerOf } from '#lib/http/api-gateway';
import { jsonApiHandler } from '#lib/http/handler';
import { jsonResponse } from '#lib/http/response';
import { listSessions } from '#lib/use-cases/list-sessions';
import { parseListSessionsQuery } from '#lib/validation/list-sessions';
import { sessionScopeDeps } from './wiring';

const deps = sessionScopeDeps(environmentOf('listSessions', process.env));

/** GET /api/embed/sessions?userId=…&boardId=…&status=…&limit=…&cursor=… */
export const handler = jsonApiHandler('list-sessions', {}, async (event) => {
  const query = parseListSessionsQuery(event.queryStringParameters, event.multiValueQueryStringParameters);
  return jsonResponse(
    200,
    await listSessions(deps, { ...keyOwnerOf(event), apiKey: apiKeyOf(event) }, query),
  );
});
