import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../../../lib/dynamodb/client';
import { DynamoMembershipRepository } from '../../../../lib/dynamodb/memberships';
import { StorageUnavailableError } from '../../../../lib/errors';
import { dynamoErrors } from '../../helpers/dynamo-errors';

const ddb = mockClient(DynamoDBDocumentClient);
const repository = new DynamoMembershipRepository(
  createDocumentClient({ region: 'us-east-1', endpoint: undefined }),
  'members-t',
);

beforeEach(() => {
  ddb.reset();
});
afterAll(() => {
  ddb.restore();
});

describe('DynamoMembershipRepository.isMember', () => {
  it('reads the membership by organization and user', async () => {
    ddb.on(GetCommand).resolves({ Item: { orgId: 'o1' } });
    await expect(repository.isMember('o1', 'u1')).resolves.toBe(true);
    expect(ddb.calls()).toHaveLength(1);
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toMatchObject({
      TableName: 'members-t',
      Key: { orgId: 'o1', userId: 'u1' },
    });
  });

  it('is false when no membership exists', async () => {
    ddb.on(GetCommand).resolves({});
    await expect(repository.isMember('o1', 'u2')).resolves.toBe(false);
  });

  it('turns throttling into StorageUnavailableError rather than "not a member"', async () => {
    ddb.on(GetCommand).rejects(dynamoErrors.throttled());
    await expect(repository.isMember('o1', 'u1')).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});
