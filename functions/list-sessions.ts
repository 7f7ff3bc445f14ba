import { apiKeyOf, keyOwnerOf } from '#lib/adapters/http/api-gateway';
import { jsonApiHandler } from '#lib/adapters/http/handler';
import { jsonResponse } from '#lib/adapters/http/response';
import { parseListSessionsQuery } from '#lib/adapters/http/validation/list-sessions';
import { environmentOf } from '#lib/definitions/environment';
import { listSessions } from '#lib/use-cases/list-sessions';
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
