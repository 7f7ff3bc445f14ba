import { DynamoBoardRepository } from '#lib/dynamodb/boards';
import { createDocumentClient } from '#lib/dynamodb/client';
import { DynamoIdempotencyRepository } from '#lib/dynamodb/idempotency';
import { DynamoMembershipRepository } from '#lib/dynamodb/memberships';
import { DynamoSessionRepository } from '#lib/dynamodb/sessions';
import { apiBaseUrl, keyOwnerOf } from '#lib/http/api-gateway';
import { jsonApiHandler } from '#lib/http/handler';
import { idempotency, idempotencyReservationOf } from '#lib/http/middlewares/idempotency';
import { jsonBody } from '#lib/http/middlewares/json-body';
import { jsonResponse } from '#lib/http/response';
import { readCreateSessionConfig } from '#lib/platform/config';
import { cryptoRandom, systemClock } from '#lib/platform/system';
import {
  type CreateSessionDeps,
  createSession,
  decodeSessionIdentity,
  encodeSessionIdentity,
  newSessionIdentity,
} from '#lib/use-cases/create-session';
import { parseCreateSessionRequest } from '#lib/validation/create-session';

const config = readCreateSessionConfig(process.env);
const db = createDocumentClient(config.dynamo);
const deps: CreateSessionDeps = {
  boards: new DynamoBoardRepository(db, config.tables.boards),
  memberships: new DynamoMembershipRepository(db, config.tables.memberships),
  sessions: new DynamoSessionRepository(db, config.tables.sessions),
  clock: systemClock,
  random: cryptoRandom,
};
const idempotencyDeps = {
  idempotency: new DynamoIdempotencyRepository(db, config.tables.idempotency),
  clock: systemClock,
  random: cryptoRandom,
};

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
