import { GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoBoardRepository } from '#lib/adapters/dynamodb/boards';
import { StorageUnavailableError } from '#lib/domain/errors';
import { dynamoErrors } from '#test/support/dynamo-errors';
import { mockedDocumentClient } from '#test/support/dynamo-mock';

const { ddb, db } = mockedDocumentClient();
const repository = new DynamoBoardRepository(db, 'boards-t');

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

  it('reads the board’s own embed origins as a list', async () => {
    const origins = ['https://app.acme.com', 'https://*.acme.com'];
    ddb.on(GetCommand).resolves({ Item: { boardId: 'b1', orgId: 'o1', embedOrigins: origins } });
    expect((await repository.get('b1'))?.embedOrigins).toEqual(origins);
  });

  it.each([
    ['an empty list', []],
    ['a string', 'https://app.acme.com'],
    ['a list holding a non-string', ['https://app.acme.com', 7]],
  ])('reads a board whose embed origins are %s as having no list of its own', async (_label, value) => {
    ddb.on(GetCommand).resolves({ Item: { boardId: 'b1', orgId: 'o1', embedOrigins: value } });
    expect(await repository.get('b1')).not.toHaveProperty('embedOrigins');
  });

  it('reads the board’s app URL, and a board without one (or with a non-string) as having none', async () => {
    ddb
      .on(GetCommand)
      .resolvesOnce({ Item: { boardId: 'b1', orgId: 'o1', appUrl: 'https://board.acme.com/' } })
      .resolvesOnce({ Item: { boardId: 'b1', orgId: 'o1', appUrl: 7 } });
    expect((await repository.get('b1'))?.appUrl).toBe('https://board.acme.com/');
    expect(await repository.get('b1')).not.toHaveProperty('appUrl');
  });

  it('turns an outage into StorageUnavailableError', async () => {
    ddb.on(GetCommand).rejects(dynamoErrors.internal());
    await expect(repository.get('b1')).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});

describe('DynamoBoardRepository.put', () => {
  it('writes the board under its id, replacing a board with that id only in the same organization', async () => {
    ddb.on(PutCommand).resolves({});
    const board = { boardId: 'b1', orgId: 'o1', visibility: 'PRIVATE', name: null };
    await expect(repository.put(board)).resolves.toBe(true);
    expect(ddb.calls()).toHaveLength(1);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: 'boards-t',
      Item: board,
      ConditionExpression: 'attribute_not_exists(boardId) OR orgId = :org',
      ExpressionAttributeValues: { ':org': 'o1' },
    });
  });

  it('stores the board’s embed origins as a list when it has any, and no attribute when it has none', async () => {
    ddb.on(PutCommand).resolves({});
    const board = { boardId: 'b1', orgId: 'o1', visibility: 'PUBLIC', name: null };
    await repository.put({ ...board, embedOrigins: ['https://app.acme.com'] });
    await repository.put({ ...board, embedOrigins: [] });
    const [listed, cleared] = ddb.commandCalls(PutCommand).map((call) => call.args[0].input.Item);
    expect(listed).toEqual({ ...board, embedOrigins: ['https://app.acme.com'] });
    expect(cleared).toEqual(board);
    expect(cleared).not.toHaveProperty('embedOrigins');
  });

  it('stores the board’s app URL when it has one, and no attribute when it has none', async () => {
    ddb.on(PutCommand).resolves({});
    const board = { boardId: 'b1', orgId: 'o1', visibility: 'PUBLIC', name: null };
    await repository.put({ ...board, appUrl: 'https://board.acme.com/' });
    await repository.put(board);
    const [withApp, without] = ddb.commandCalls(PutCommand).map((call) => call.args[0].input.Item);
    expect(withApp).toEqual({ ...board, appUrl: 'https://board.acme.com/' });
    expect(without).not.toHaveProperty('appUrl');
  });

  it('answers false, writing nothing, when the board belongs to another organization', async () => {
    ddb.on(PutCommand).rejects(dynamoErrors.conditionFailed());
    await expect(
      repository.put({ boardId: 'b1', orgId: 'o2', visibility: 'PUBLIC', name: null }),
    ).resolves.toBe(false);
  });

  it('turns throttling into StorageUnavailableError', async () => {
    ddb.on(PutCommand).rejects(dynamoErrors.throttled());
    await expect(
      repository.put({ boardId: 'b1', orgId: 'o1', visibility: 'PUBLIC', name: null }),
    ).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});

describe('DynamoBoardRepository.list', () => {
  const board = (boardId: string) => ({ boardId, orgId: 'o1', visibility: 'PUBLIC', name: boardId });

  it('scans the boards table', async () => {
    ddb.on(ScanCommand).resolves({ Items: [board('b1')] });
    await expect(repository.list()).resolves.toEqual([board('b1')]);
    expect(ddb.calls()).toHaveLength(1);
    expect(ddb.commandCalls(ScanCommand)[0]?.args[0].input).toEqual({ TableName: 'boards-t' });
  });

  it('follows LastEvaluatedKey until the last page', async () => {
    ddb
      .on(ScanCommand)
      .resolvesOnce({ Items: [board('b1')], LastEvaluatedKey: { boardId: 'b1' } })
      .resolvesOnce({ Items: [], LastEvaluatedKey: { boardId: 'empty-page' } })
      .resolvesOnce({ Items: [board('b2'), board('b3')] });
    await expect(repository.list()).resolves.toEqual([board('b1'), board('b2'), board('b3')]);
    const starts = ddb.commandCalls(ScanCommand).map((c) => c.args[0].input.ExclusiveStartKey);
    expect(starts).toEqual([undefined, { boardId: 'b1' }, { boardId: 'empty-page' }]);
  });

  it('sorts boards by id across pages and normalizes each like get does', async () => {
    ddb
      .on(ScanCommand)
      .resolvesOnce({
        Items: [board('c'), { boardId: 'a', orgId: 'o1' }],
        LastEvaluatedKey: { boardId: 'a' },
      })
      .resolvesOnce({ Items: [board('b')] });
    await expect(repository.list()).resolves.toEqual([
      { boardId: 'a', orgId: 'o1', visibility: '', name: null },
      board('b'),
      board('c'),
    ]);
  });

  it('returns an empty list for an empty table', async () => {
    ddb.on(ScanCommand).resolves({});
    await expect(repository.list()).resolves.toEqual([]);
  });

  it('turns an outage on a later page into StorageUnavailableError', async () => {
    ddb
      .on(ScanCommand)
      .resolvesOnce({ Items: [board('b1')], LastEvaluatedKey: { boardId: 'b1' } })
      .rejectsOnce(dynamoErrors.http503());
    await expect(repository.list()).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});
