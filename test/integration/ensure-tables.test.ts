import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { describe, expect, it } from 'vitest';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import { ensureTables } from '#local/dynamodb';

describe('ensureTables', () => {
  it('returns only once the tables it created are ACTIVE, so a DynamoDB that creates slowly can be written at once', async () => {
    // Like DynamoDB itself, this dynalite keeps new tables CREATING for a while and refuses writes meanwhile.
    const server = dynalite({ createTableMs: 700 });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const db = createDocumentClient({ endpoint, region: 'local' });
    try {
      await ensureTables(endpoint, LOCAL_TABLE_NAMES);
      await expect(
        db.send(new PutCommand({ TableName: LOCAL_TABLE_NAMES.boards, Item: { boardId: 'b' } })),
      ).resolves.toBeDefined();
      // A second call finds every table and creates nothing.
      await ensureTables(endpoint, LOCAL_TABLE_NAMES);
    } finally {
      db.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
