import { apiKeyOf, keyOwnerOf } from '#lib/adapters/http/api-gateway';
import { jsonApiHandler } from '#lib/adapters/http/handler';
import { jsonResponse } from '#lib/adapters/http/response';
import { parseListEventsQuery } from '#lib/adapters/http/validation/list-events';
import { environmentOf } from '#lib/definitions/environment';
import { listEvents } from '#lib/use-cases/list-events';
import { eventsDeps } from './wiring';

const deps = eventsDeps(environmentOf('listEvents', process.env));

/** GET /api/embed/events?sessionId=…&type=…&limit=…&cursor=… */
export const handler = jsonApiHandler('list-events', {}, async (event) => {
  const query = parseListEventsQuery(event.queryStringParameters, event.multiValueQueryStringParameters);
  return jsonResponse(200, await listEvents(deps, { ...keyOwnerOf(event), apiKey: apiKeyOf(event) }, query));
});
