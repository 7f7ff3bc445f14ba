/**
 * The composition root the session-management handlers share: their use cases' ports, wired to the
 * DynamoDB adapters of the tables named in the environment, on one document client, once per cold start.
 */
import { DynamoBoardRepository } from '#lib/dynamodb/boards';
import { createDocumentClient } from '#lib/dynamodb/client';
import { DynamoEventStore } from '#lib/dynamodb/events';
import { DynamoMembershipRepository } from '#lib/dynamodb/memberships';
import { DynamoSessionRepository } from '#lib/dynamodb/sessions';
import { readStorageConfig } from '#lib/platform/config';
import { cryptoRandom, systemClock } from '#lib/platform/system';
import type { ListSessionsDeps } from '#lib/use-cases/list-sessions';
import type { ManageSessionDeps } from '#lib/use-cases/manage-session';
import type { RevokeUserSessionsDeps } from '#lib/use-cases/revoke-user-sessions';

type Env = Record<string, string | undefined>;

/** Ports of retrieving and revoking one session. */
export function manageSessionDeps(env: Env): ManageSessionDeps {
  const { tables, dynamo } = readStorageConfig(env, ['sessions', 'memberships']);
  const db = createDocumentClient(dynamo);
  return {
    sessions: new DynamoSessionRepository(db, tables.sessions),
    memberships: new DynamoMembershipRepository(db, tables.memberships),
    clock: systemClock,
  };
}

/** Ports of listing and revoking a user's or a board's sessions. */
export function sessionScopeDeps(env: Env): ListSessionsDeps & RevokeUserSessionsDeps {
  const { tables, dynamo } = readStorageConfig(env, ['sessions', 'boards', 'memberships']);
  const db = createDocumentClient(dynamo);
  return {
    sessions: new DynamoSessionRepository(db, tables.sessions),
    boards: new DynamoBoardRepository(db, tables.boards),
    memberships: new DynamoMembershipRepository(db, tables.memberships),
    clock: systemClock,
    random: cryptoRandom,
  };
}

/** Ports of the events API. */
export function eventsDeps(env: Env): { events: DynamoEventStore } {
  const { tables, dynamo } = readStorageConfig(env, ['events']);
  return { events: new DynamoEventStore(createDocumentClient(dynamo), tables.events) };
}
