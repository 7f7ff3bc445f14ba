import { apiBaseUrl, keyOwnerOf } from '#lib/adapters/http/api-gateway';
import { jsonApiHandler } from '#lib/adapters/http/handler';
import { idempotency, idempotencyReservationOf } from '#lib/adapters/http/middlewares/idempotency';
import { jsonBody } from '#lib/adapters/http/middlewares/json-body';
import { jsonResponse } from '#lib/adapters/http/response';
import { parseCreateSessionRequest } from '#lib/adapters/http/validation/create-session';
import { environmentOf } from '#lib/definitions/environment';
import { readCreateSessionConfig } from '#lib/platform/config';
import { cryptoRandom } from '#lib/platform/system';
import {
  createSession,
  decodeSessionIdentity,
  encodeSessionIdentity,
  newSessionIdentity,
} from '#lib/use-cases/create-session';
import { createSessionDeps } from './wiring';

const config = readCreateSessionConfig(environmentOf('createSession', process.env));
const { deps, idempotencyDeps } = createSessionDeps(config);

/** A keyed create fixes its session's id and token when it claims the key: every re-run writes that session. */
const reserveIdentity = () => encodeSessionIdentity(newSessionIdentity(cryptoRandom));

/** POST /api/embed/sessions, idempotent with an Idempotency-Key */
export const handler = jsonApiHandler(
  'create-session',
  {
    outer: [idempotency({ deps: idempotencyDeps, reserve: reserveIdentity })],
    inner: [jsonBody({ maxBytes: config.maxBodyBytes })],
  },
  async (event) => {
    const identity = decodeSessionIdentity(idempotencyReservationOf(event));
    const created = await createSession(deps, {
      keyOwner: keyOwnerOf(event),
      request: parseCreateSessionRequest(event.body as unknown, config),
      baseUrl: config.publicBaseUrl ?? apiBaseUrl(event),
      ...(identity ? { identity } : {}),
    });
    return jsonResponse(201, created);
  },
);
