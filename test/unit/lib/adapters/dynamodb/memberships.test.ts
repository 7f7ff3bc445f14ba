import { BatchGetCommand, DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoMembershipRepository } from '#lib/adapters/dynamodb/memberships';
import { StorageUnavailableError } from '#lib/domain/errors';
import { dynamoErrors } from '#test/support/dynamo-errors';
import { mockedDocumentClient } from '#test/support/dynamo-mock';

const { ddb, db } = mockedDocumentClient();
const repository = new DynamoMembershipRepository(db, 'members-t');

describe('DynamoMembershipRepository.isMember', () => {
  it('reads the membership by organization and user', async () => {
    ddb.on(GetCommand).resolves({ Item: { orgId: 'o1' } });
    await expect(repository.isMember('o1', 'u1')).resolves.toBe(true);
    expect(ddb.calls()).toHaveLength(1);
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: 'members-t',
      Key: { orgId: 'o1', userId: 'u1' },
      ProjectionExpression: 'orgId',
      // Losing membership must lose access at once.
      ConsistentRead: true,
    });
  });

  it('is false when no membership exists', async () => {
    ddb.on(GetCommand).resolves({});
    await expect(repository.isMember('o1', 'u2')).resolves.toBe(false);
  });
});

describe('DynamoMembershipRepository.add', () => {
  it('writes the membership under organization and user with the time it was added', async () => {
    ddb.on(PutCommand).resolves({});
    await repository.add('o1', 'u1', '2026-04-05T06:07:08.009Z');
    expect(ddb.calls()).toHaveLength(1);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: 'members-t',
      Item: { orgId: 'o1', userId: 'u1', createdAt: '2026-04-05T06:07:08.009Z' },
    });
  });
});

describe('DynamoMembershipRepository.remove', () => {
  it('deletes the membership by organization and user, asking for what was there', async () => {
    ddb.on(DeleteCommand).resolves({ Attributes: { orgId: 'o1', userId: 'u1' } });
    await repository.remove('o1', 'u1');
    expect(ddb.calls()).toHaveLength(1);
    expect(ddb.commandCalls(DeleteCommand)[0]?.args[0].input).toEqual({
      TableName: 'members-t',
      Key: { orgId: 'o1', userId: 'u1' },
      ReturnValues: 'ALL_OLD',
    });
  });

  it('is true when a membership was removed', async () => {
    ddb.on(DeleteCommand).resolves({ Attributes: { orgId: 'o1', userId: 'u1', createdAt: '2026-01-01' } });
    await expect(repository.remove('o1', 'u1')).resolves.toBe(true);
  });

  it('is false when there was no such membership', async () => {
    ddb.on(DeleteCommand).resolves({});
    await expect(repository.remove('o1', 'u2')).resolves.toBe(false);
  });
});

describe('DynamoMembershipRepository: an outage', () => {
  it.each([
    [
      'isMember (rather than "not a member")',
      () => ddb.on(GetCommand),
      () => repository.isMember('o1', 'u1'),
    ],
    ['add', () => ddb.on(PutCommand), () => repository.add('o1', 'u1', '2026-01-01T00:00:00.000Z')],
    [
      'remove (rather than "nothing removed")',
      () => ddb.on(DeleteCommand),
      () => repository.remove('o1', 'u1'),
    ],
  ])('during %s is StorageUnavailableError, throttled or timed out alike', async (_call, command, call) => {
    for (const outage of [dynamoErrors.throttled(), dynamoErrors.throttling(), dynamoErrors.timeout()]) {
      command().rejects(outage);
      await expect(call(), outage.name).rejects.toBeInstanceOf(StorageUnavailableError);
    }
  });
});

describe('DynamoMembershipRepository.orgsOf', () => {
  it('lists the organizations from the user index, each confirmed by a consistent read', async () => {
    ddb
      .on(QueryCommand)
      .resolvesOnce({
        Items: [{ orgId: 'o1', userId: 'u1' }],
        LastEvaluatedKey: { orgId: 'o1', userId: 'u1' },
      })
      .resolvesOnce({
        Items: [
          { orgId: 'o2', userId: 'u1' },
          { orgId: 'o3', userId: 'u1' },
        ],
      });
    // o2 was removed a moment ago: the index still shows it, the table no longer has it.
    ddb.on(BatchGetCommand).resolves({ Responses: { 'members-t': [{ orgId: 'o3' }, { orgId: 'o1' }] } });
    await expect(repository.orgsOf('u1')).resolves.toEqual(['o1', 'o3']);
    expect(ddb.commandCalls(QueryCommand)[0]?.args[0].input).toMatchObject({
      TableName: 'members-t',
      IndexName: 'userId-index',
      KeyConditionExpression: 'userId = :u',
      ExpressionAttributeValues: { ':u': 'u1' },
    });
    expect(ddb.commandCalls(BatchGetCommand)[0]?.args[0].input.RequestItems?.['members-t']).toEqual({
      Keys: [
        { orgId: 'o1', userId: 'u1' },
        { orgId: 'o2', userId: 'u1' },
        { orgId: 'o3', userId: 'u1' },
      ],
      ConsistentRead: true,
    });
  });

  it('reads nothing more when the user belongs to no organization', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    await expect(repository.orgsOf('u1')).resolves.toEqual([]);
    expect(ddb.commandCalls(BatchGetCommand)).toHaveLength(0);
  });
});
