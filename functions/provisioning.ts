import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { operatorOf, pathParameter } from '#lib/adapters/http/api-gateway';
import { jsonApiHandler } from '#lib/adapters/http/handler';
import { jsonBody } from '#lib/adapters/http/middlewares/json-body';
import { optionalJsonBody } from '#lib/adapters/http/middlewares/optional-json-body';
import { jsonResponse } from '#lib/adapters/http/response';
import {
  parseCreateApiKeyRequest,
  parseListApiKeysQuery,
  parsePutBoardRequest,
  parseRemoveMemberQuery,
  parseRevokeApiKeyRequest,
} from '#lib/adapters/http/validation/provisioning';
import { environmentOf } from '#lib/definitions/environment';
import {
  addMember,
  applyBoard,
  createApiKey,
  deleteBoard,
  listApiKeys,
  listBoards,
  listMembers,
  removeMember,
  revokeApiKey,
} from '#lib/use-cases/admin';
import { boardView } from '#lib/use-cases/provisioning';
import { provisioningDeps } from './wiring';

const deps = provisioningDeps(environmentOf('provisioning', process.env));
/** Every body here is a board's state or a few fields: anything near this size is not one. */
const MAX_BODY_BYTES = 64 * 1024;

type Route = (event: APIGatewayProxyEvent, actor: string) => Promise<APIGatewayProxyResult>;

const org = (event: APIGatewayProxyEvent) => pathParameter(event, 'orgId');

/** Each provisioning route (lib/definitions/routes.ts) by method and resource: one use case each. */
const ROUTES: Record<string, Route> = {
  'GET /admin/orgs/{orgId}/boards': async (event) =>
    jsonResponse(200, { data: (await listBoards(deps, org(event))).map(boardView) }),
  'PUT /admin/orgs/{orgId}/boards/{boardId}': async (event, actor) => {
    const input = parsePutBoardRequest(event.body as unknown, {
      orgId: org(event),
      boardId: pathParameter(event, 'boardId'),
    });
    const { board, outcome } = await applyBoard({ ...deps, actor }, input);
    return jsonResponse(outcome === 'created' ? 201 : 200, { board: boardView(board), outcome });
  },
  'DELETE /admin/orgs/{orgId}/boards/{boardId}': async (event, actor) =>
    jsonResponse(200, await deleteBoard({ ...deps, actor }, org(event), pathParameter(event, 'boardId'))),
  'GET /admin/orgs/{orgId}/members': async (event) => jsonResponse(200, await listMembers(deps, org(event))),
  'PUT /admin/orgs/{orgId}/members/{userId}': async (event, actor) => {
    const added = await addMember({ ...deps, actor }, org(event), pathParameter(event, 'userId'));
    return jsonResponse(added.outcome === 'created' ? 201 : 200, added);
  },
  'DELETE /admin/orgs/{orgId}/members/{userId}': async (event, actor) => {
    const options = parseRemoveMemberQuery(
      event.queryStringParameters,
      event.multiValueQueryStringParameters,
    );
    return jsonResponse(
      200,
      await removeMember({ ...deps, actor }, org(event), pathParameter(event, 'userId'), options),
    );
  },
  'GET /admin/api-keys': async (event) => {
    const { userId } = parseListApiKeysQuery(
      event.queryStringParameters,
      event.multiValueQueryStringParameters,
    );
    return jsonResponse(200, { data: await listApiKeys(deps, userId) });
  },
  'POST /admin/api-keys': async (event, actor) => {
    const { userId, name, ...options } = parseCreateApiKeyRequest(event.body as unknown);
    return jsonResponse(201, await createApiKey({ ...deps, actor }, userId, name, options));
  },
  'POST /admin/api-keys/{keyId}/revoke': async (event, actor) =>
    jsonResponse(
      200,
      await revokeApiKey(
        { ...deps, actor },
        pathParameter(event, 'keyId'),
        parseRevokeApiKeyRequest(event.body as unknown),
      ),
    ),
};

/** The routes that read a JSON body; `optional`: an empty or blank one is taken as none (a revocation alone). */
const BODIES: Record<string, 'required' | 'optional'> = {
  'PUT /admin/orgs/{orgId}/boards/{boardId}': 'required',
  'POST /admin/api-keys': 'required',
  'POST /admin/api-keys/{keyId}/revoke': 'optional',
};

/** The JSON body of the routes that take one; what any other route carries is not read. */
const bodyWhereRead = ((required, optional) => ({
  before: (request) => {
    const { httpMethod, resource } = request.event;
    const kind = BODIES[`${httpMethod} ${resource}`];
    if (kind === undefined) return;
    return (kind === 'required' ? required : optional).before?.(request);
  },
}))(
  jsonBody({ maxBytes: MAX_BODY_BYTES }),
  optionalJsonBody({ maxBytes: MAX_BODY_BYTES }),
) satisfies middy.MiddlewareObj<APIGatewayProxyEvent>;

/** The provisioning API: every route under /admin, authorized by AWS IAM (SigV4) in API Gateway. */
export const handler = jsonApiHandler('provisioning', { inner: [bodyWhereRead] }, async (event) => {
  const route = ROUTES[`${event.httpMethod} ${event.resource}`];
  if (!route) throw new Error(`no provisioning route ${event.httpMethod} ${event.resource}`);
  return route(event, operatorOf(event));
});
