import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoBoardRepository } from '#lib/adapters/dynamodb/boards';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { DynamoSessionRepository } from '#lib/adapters/dynamodb/sessions';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import { hashCredential } from '#lib/domain/credentials';
import { abstractLevelModulesOfDynalite } from '#local/dynalite-iterators';
import { type EmbeddedDynamo, ensureTables, startEmbeddedDynamo } from '#local/dynamodb';
import { storedSession } from '#test/support/fixtures';
import { call, createSessionCall } from '#test/support/local-runtime';
import { useTestRuntime } from '#test/support/runtime-fixture';

/**
 * The embedded DynamoDB must not keep an iterator open per Query or Scan: each open iterator holds a
 * snapshot of dynalite's in-memory tree, which is how `npm start` grew from 444 to 742 MB in two minutes
 * of embed page loads. abstract-level attaches every open iterator to its database and detaches it on
 * close, so counting the two counts the iterators still open.
 */
let open = 0;
const restores: Array<() => void> = [];

beforeAll(() => {
  for (const level of abstractLevelModulesOfDynalite()) {
    const proto = level.AbstractLevel.prototype;
    const { attachResource, detachResource } = proto;
    proto.attachResource = function (resource) {
      if (resource.constructor.name.includes('Iterator')) open += 1;
      return attachResource.call(this, resource);
    };
    proto.detachResource = function (resource) {
      if (resource.constructor.name.includes('Iterator')) open -= 1;
      return detachResource.call(this, resource);
    };
    restores.push(() => Object.assign(proto, { attachResource, detachResource }));
  }
});
afterAll(() => {
  for (const restore of restores) restore();
});

describe.each([
  ['in memory', false],
  ['persisted in DATA_DIR', true],
])('the embedded DynamoDB, %s', (_name, persisted) => {
  let dynamo: EmbeddedDynamo;
  let db: ReturnType<typeof createDocumentClient>;
  let dataDir: string | undefined;

  beforeAll(async () => {
    dataDir = persisted ? mkdtempSync(join(tmpdir(), 'dynalite-iterators-')) : undefined;
    dynamo = await startEmbeddedDynamo({ port: 0, host: '127.0.0.1', dataDir });
    await ensureTables(dynamo.endpoint, LOCAL_TABLE_NAMES);
    db = createDocumentClient({ endpoint: dynamo.endpoint, region: 'local' });
  });
  afterAll(async () => {
    db?.destroy();
    await dynamo?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('closes the iterator of every Query and Scan: none stay open after 90 of them', async () => {
    const sessions = new DynamoSessionRepository(db, LOCAL_TABLE_NAMES.sessions);
    const boards = new DynamoBoardRepository(db, LOCAL_TABLE_NAMES.boards);
    const token = randomBytes(24).toString('base64url');
    await sessions.create(
      storedSession({
        id: '00000000-0000-4000-8000-00000000it01',
        boardId: 'b',
        tokenHash: hashCredential(token),
        expiresAt: '2099-01-01T00:00:00.000Z',
      }),
    );
    const before = open;
    // Any iterator left open shows: the count must come back to where it was.
    for (let i = 0; i < 30; i++) {
      expect(await sessions.lookupToken(hashCredential(token))).toBeDefined();
      expect(await sessions.lookupToken(hashCredential(`missing-${i}`))).toBeUndefined();
      await boards.list();
    }
    // Closing is asynchronous: wait until every iterator opened since has closed again.
    await expect.poll(() => open).toBeLessThanOrEqual(before);
  });
});

describe('npm start under embed page loads', () => {
  const runtime = useTestRuntime();

  it('keeps no iterator open after 50 loads of the embed page', async () => {
    const created = await createSessionCall(runtime, {
      boardId: runtime.demo?.publicBoardId,
      userId: 'u',
      email: 'u@example.com',
    });
    const before = open;
    for (let i = 0; i < 50; i++) {
      expect((await call(runtime, `/embed?token=${created.body.sessionToken}`)).status).toBe(200);
    }
    // Closing is asynchronous: wait until every iterator opened since has closed again.
    await expect.poll(() => open).toBeLessThanOrEqual(before);
  });
});
