import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoBoardRepository } from '../../../../lib/dynamodb/boards';
import { createDocumentClient } from '../../../../lib/dynamodb/client';
import { StorageUnavailableError } from '../../../../lib/errors';
import { dynamoErrors } from '../../helpers/dynamo-errors';

const ddb = mockClient(DynamoDBDocumentClient);
const repository = new DynamoBoardRepository(
  createDocumentClient({ region: 'us-east-1', endpoint: undefined }),
  'boards-t',
);

beforeEach(() => {
  ddb.reset();
});
afterAll(() => {
  ddb.restore();
});

describe('DynamoBoardRepository.get', () => {
  it('reads one board by its id', async () => {
    ddb
      .on(GetCommand)
      .resolves({ Item: { boardId: 'b1', orgId: 'o1', visibility: 'PUBLIC', name: 'Roadmap' } });
    await expect(repository.get('b1')).resolves.toEqual({
      boardId: 'b1',
      orgId: 'o1',
      visibility: 'PUBLIC',
      name: 'Roadmap',
    });
    expect(ddb.calls()).toHaveLength(1);
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: 'boards-t',
      Key: { boardId: 'b1' },
    });
  });

  it('returns undefined for a missing board', async () => {
    ddb.on(GetCommand).resolves({});
    await expect(repository.get('nope')).resolves.toBeUndefined();
  });

  it('gives a board without a visibility an empty one (never PUBLIC) and no name null', async () => {
    ddb.on(GetCommand).resolves({ Item: { boardId: 'b1', orgId: 'o1' } });
    await expect(repository.get('b1')).resolves.toEqual({
      boardId: 'b1',
      orgId: 'o1',
      visibility: '',
      name: null,
    });
  });

  it('does not turn a non-string visibility into a string', async () => {
    ddb.on(GetCommand).resolves({ Item: { boardId: 'b1', orgId: 'o1', visibility: ['PUBLIC'] } });
    expect((await repository.get('b1'))?.visibility).toBe('');
  });

  it('turns an outage into StorageUnavailableError', async () => {
    ddb.on(GetCommand).rejects(dynamoErrors.internal());
    await expect(repository.get('b1')).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});
