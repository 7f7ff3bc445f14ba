import {
  type AttributeValue,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_TABLE_NAMES, SESSION_TOKEN_INDEX } from '#lib/definitions/tables';
import { ensureTables } from '#local/dynamodb';
import { startTestDynamo, testEngine } from '#test/support/test-dynamo';

/**
 * How the two engines the tests run on (dynalite in `npm test`, AWS's DynamoDB Local in
 * `npm run test:dynamodb-local`) behave where the service depends on DynamoDB's rules. What must hold on
 * both is asserted as such; where they differ, each test states both behaviours and checks the one of this
 * run's engine, so the differences documented in docs/architecture.md stay true. DynamoDB Local is the
 * reference: it is what AWS ships to stand in for DynamoDB.
 */
const ENGINE = testEngine();
const onLocal = ENGINE === 'dynamodb-local';
const TABLE = LOCAL_TABLE_NAMES.sessions;

let dynamo: { endpoint: string; close(): Promise<void> };
let client: DynamoDBClient;

beforeAll(async () => {
  dynamo = await startTestDynamo();
  await ensureTables(dynamo.endpoint, LOCAL_TABLE_NAMES);
  client = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
});
afterAll(async () => {
  client?.destroy();
  await dynamo?.close();
});

/** Puts an item; resolves to 'ok' or the error's name (and the error, for what it carries). */
async function put(
  item: Record<string, AttributeValue>,
  extra: Partial<ConstructorParameters<typeof PutItemCommand>[0]> = {},
): Promise<{ outcome: string; error?: Error & { Item?: unknown } }> {
  try {
    await client.send(new PutItemCommand({ TableName: TABLE, Item: item, ...extra }));
    return { outcome: 'ok' };
  } catch (error) {
    return { outcome: (error as Error).name, error: error as Error };
  }
}

const session = (id: string, tokenHash = `hash-${id}`): Record<string, AttributeValue> => ({
  id: { S: id },
  tokenHash: { S: tokenHash },
});

/** A map attribute `levels` maps deep (the attribute itself counting as one). */
function nestedMaps(levels: number): AttributeValue {
  let value: AttributeValue = { S: 'leaf' };
  for (let i = 0; i < levels; i++) value = { M: { n: value } };
  return value;
}

describe(`DynamoDB rules the service relies on, the same on both engines (this run: ${ENGINE})`, () => {
  it('refuses a conditional put over an existing item with ConditionalCheckFailedException', async () => {
    await put(session('cond-1'));
    const again = await put(session('cond-1'), { ConditionExpression: 'attribute_not_exists(id)' });
    expect(again.outcome).toBe('ConditionalCheckFailedException');
  });

  it('refuses a strongly consistent read of a global secondary index (the embed page retries a miss instead)', async () => {
    const outcome = await client
      .send(
        new QueryCommand({
          TableName: TABLE,
          IndexName: SESSION_TOKEN_INDEX,
          ConsistentRead: true,
          KeyConditionExpression: 'tokenHash = :h',
          ExpressionAttributeValues: { ':h': { S: 'x' } },
        }),
      )
      .then(
        () => 'ok',
        (error: Error) => error.name,
      );
    expect(outcome).toBe('ValidationException');
  });

  it('accepts an item of exactly 400 KB and refuses one byte more (names count, as in DynamoDB)', async () => {
    const fill = (id: string, bytes: number) => ({ id: { S: id }, pad: { S: 'x'.repeat(bytes) } });
    const room = 400 * 1024 - 'id'.length - 'pad'.length;
    expect((await put(fill('size-a', room - 'size-a'.length))).outcome).toBe('ok');
    expect((await put(fill('size-b', room - 'size-b'.length + 1))).outcome).toBe('ValidationException');
  });

  it('stores numbers from 1e-130 to just under 1e126 with 38 significant digits, and refuses the rest', async () => {
    const number = async (id: string, n: string) => (await put({ id: { S: id }, n: { N: n } })).outcome;
    expect(await number('n-1', '1e-130')).toBe('ok');
    expect(await number('n-2', '9.9999999999999999999999999999999999999e125')).toBe('ok');
    expect(await number('n-3', '1e126')).toBe('ValidationException');
    expect(await number('n-4', '1e-131')).toBe('ValidationException');
    expect(await number('n-5', '123456789012345678901234567890123456789')).toBe('ValidationException');
  });

  it('refuses a partition key over 2048 bytes', async () => {
    expect((await put(session('k'.repeat(2049)))).outcome).toBe('ValidationException');
  });

  it('names a missing table ResourceNotFoundException', async () => {
    const outcome = await client
      .send(new GetItemCommand({ TableName: 'no-such-table', Key: { id: { S: 'a' } } }))
      .then(
        () => 'ok',
        (error: Error) => error.name,
      );
    expect(outcome).toBe('ResourceNotFoundException');
  });

  it('finds an item through its index as soon as it is written here (DynamoDB itself may take a moment)', async () => {
    await put(session('gsi-1', 'hash-gsi-1'));
    const { Count } = await client.send(
      new QueryCommand({
        TableName: TABLE,
        IndexName: SESSION_TOKEN_INDEX,
        KeyConditionExpression: 'tokenHash = :h',
        ExpressionAttributeValues: { ':h': { S: 'hash-gsi-1' } },
      }),
    );
    expect(Count).toBe(1);
  });
});

describe(`where the engines differ (this run: ${ENGINE})`, () => {
  it('returns the refused item with ReturnValuesOnConditionCheckFailure: ALL_OLD (DynamoDB Local: yes; dynalite: ignores it)', async () => {
    await put(session('old-1', 'hash-old-1'));
    const again = await put(session('old-1'), {
      ConditionExpression: 'attribute_not_exists(id)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    expect(again.outcome).toBe('ConditionalCheckFailedException');
    expect(again.error?.Item).toEqual(
      onLocal ? { id: { S: 'old-1' }, tokenHash: { S: 'hash-old-1' } } : undefined,
    );
  });

  it('refuses an empty string as an index key (DynamoDB Local: ValidationException; dynalite: stores it)', async () => {
    expect((await put(session('empty-1', ''))).outcome).toBe(onLocal ? 'ValidationException' : 'ok');
  });

  it('refuses an index key over 2048 bytes (DynamoDB Local: ValidationException; dynalite: stores it)', async () => {
    expect((await put(session('long-1', 'h'.repeat(2048)))).outcome).toBe('ok');
    expect((await put(session('long-2', 'h'.repeat(2049)))).outcome).toBe(
      onLocal ? 'ValidationException' : 'ok',
    );
  });

  it('limits nesting (DynamoDB Local: 31 nested maps, refuses 32; dynalite: no limit)', async () => {
    expect((await put({ id: { S: 'nest-31' }, m: nestedMaps(31) })).outcome).toBe('ok');
    expect((await put({ id: { S: 'nest-32' }, m: nestedMaps(32) })).outcome).toBe(
      onLocal ? 'ValidationException' : 'ok',
    );
    expect((await put({ id: { S: 'nest-40' }, m: nestedMaps(40) })).outcome).toBe(
      onLocal ? 'ValidationException' : 'ok',
    );
  });

  it('configures TTL (DynamoDB Local: accepts it and deletes nothing within seconds; dynalite: UnknownOperationException)', async () => {
    const outcome = await client
      .send(
        new UpdateTimeToLiveCommand({
          TableName: TABLE,
          TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
        }),
      )
      .then(
        () => 'ok',
        (error: Error) => error.name,
      );
    expect(outcome).toBe(onLocal ? 'ok' : 'UnknownOperationException');
  });
});
