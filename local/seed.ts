import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoApiKeyRepository } from '#lib/adapters/dynamodb/api-keys';
import { DynamoBoardRepository } from '#lib/adapters/dynamodb/boards';
import { DynamoMembershipRepository } from '#lib/adapters/dynamodb/memberships';
import type { TableKey } from '#lib/definitions/tables';
import type { DestinationPolicy } from '#lib/domain/destinations';
import { cryptoRandom, systemClock } from '#lib/platform/system';
import {
  addMember,
  createApiKey,
  createBoard,
  listApiKeys,
  RECORD_ONLY_THROTTLING,
  revokeApiKey,
} from '#lib/use-cases/admin';

export const DEMO = {
  orgId: 'org_demo',
  userId: 'user_demo',
  publicBoardId: 'board_public_demo',
  privateBoardId: 'board_private_demo',
  otherOrgBoardId: 'board_other_org',
} as const;

export interface DemoData {
  apiKey: string;
  keyId: string;
  userId: string;
  publicBoardId: string;
  privateBoardId: string;
  otherOrgBoardId: string;
}

/** The demo boards' application runs on this machine, over loopback http. */
const LOCAL_APP_URL_RULE = { allowLoopbackHttp: true } as const;

/** The name of the key `npm start` issues; earlier keys of this name are revoked at the next start. */
export const DEMO_KEY_NAME = 'demo key (npm start)';

/**
 * Demo data for `npm start`: a public board, a private board of the demo user's organization, a private
 * board of another organization, and a fresh API key. Keys are stored hashed, so a new one is issued on
 * every start and printed once; the demo keys of earlier starts are revoked, so with a persistent
 * DATA_DIR (or a shared DYNAMODB_ENDPOINT) an old key from an old log stops working. Safe to run again.
 */
export async function seedDemoData(
  db: DynamoDBDocumentClient,
  tables: Record<TableKey, string>,
  options: { appUrl?: string; logoutUrl?: string; destinations?: DestinationPolicy } = {},
): Promise<DemoData> {
  const boards = new DynamoBoardRepository(db, tables.boards);
  // With an app URL (the reference board application `npm start` runs), the demo boards hand their users
  // to it (and it receives their back-channel logouts); without one, a board keeps the application it had
  // (none on a fresh start: the built-in page).
  const deps = { boards, appUrlRule: LOCAL_APP_URL_RULE, destinations: options.destinations };
  const { appUrl, logoutUrl } = options;
  await createBoard(deps, {
    boardId: DEMO.publicBoardId,
    orgId: DEMO.orgId,
    visibility: 'PUBLIC',
    name: 'Product roadmap',
    appUrl,
    logoutUrl,
  });
  await createBoard(deps, {
    boardId: DEMO.privateBoardId,
    orgId: DEMO.orgId,
    visibility: 'PRIVATE',
    name: 'Team retro',
    appUrl,
    logoutUrl,
  });
  await createBoard(deps, {
    boardId: DEMO.otherOrgBoardId,
    orgId: 'org_other',
    visibility: 'PRIVATE',
    name: 'Someone else’s plans',
    appUrl,
    logoutUrl,
  });
  await addMember(
    { memberships: new DynamoMembershipRepository(db, tables.memberships), clock: systemClock },
    DEMO.orgId,
    DEMO.userId,
  );
  const apiKeys = new DynamoApiKeyRepository(db, tables.apiKeys);
  const key = await createApiKey(
    { apiKeys, throttling: RECORD_ONLY_THROTTLING, clock: systemClock, random: cryptoRandom },
    DEMO.userId,
    DEMO_KEY_NAME,
  );
  for (const old of await listApiKeys({ apiKeys }, DEMO.userId)) {
    if (old.name === DEMO_KEY_NAME && old.status === 'ACTIVE' && old.keyId !== key.keyId) {
      await revokeApiKey({ apiKeys, throttling: RECORD_ONLY_THROTTLING, clock: systemClock }, old.keyId);
    }
  }
  return {
    apiKey: key.apiKey,
    keyId: key.keyId,
    userId: DEMO.userId,
    publicBoardId: DEMO.publicBoardId,
    privateBoardId: DEMO.privateBoardId,
    otherOrgBoardId: DEMO.otherOrgBoardId,
  };
}
