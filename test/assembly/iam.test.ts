import { describe, expect, it } from 'vitest';
import { checksFor, evaluate, unusedGrants } from './iam';

const TABLE = 'arn:aws:dynamodb:eu-west-1:123456789012:table/sessions';
const arn = (name: string) => `arn:aws:dynamodb:eu-west-1:123456789012:table/${name}`;
const allow = (Action: string | string[], Resource: string | string[], Condition?: object) => ({
  Effect: 'Allow',
  Action,
  Resource,
  ...(Condition ? { Condition } : {}),
});

describe('the checks a DynamoDB call needs', () => {
  it('authorizes a Query on its index ARN, not the table', () => {
    expect(checksFor('Query', { TableName: 'sessions', IndexName: 'board-index' }, arn)).toEqual([
      { action: 'dynamodb:Query', resource: `${TABLE}/index/board-index`, context: {} },
    ]);
  });

  it('authorizes BatchGetItem once per table it reads', () => {
    const checks = checksFor('BatchGetItem', { RequestItems: { sessions: {}, boards: {} } }, arn);
    expect(checks.map((check) => check.resource)).toEqual([TABLE, arn('boards')]);
  });

  it('authorizes each TransactWriteItems entry as its own item action', () => {
    const checks = checksFor(
      'TransactWriteItems',
      { TransactItems: [{ Put: { TableName: 'sessions' } }, { ConditionCheck: { TableName: 'boards' } }] },
      arn,
    );
    expect(checks.map((check) => `${check.action} ${check.resource}`)).toEqual([
      `dynamodb:PutItem ${TABLE}`,
      `dynamodb:ConditionCheckItem ${arn('boards')}`,
    ]);
  });
});

describe('IAM evaluation of a function’s statements', () => {
  const query = checksFor('Query', { TableName: 'sessions', IndexName: 'board-index' }, arn)[0] as never;

  it('denies a Query whose index ARN the grant leaves out (implicit deny)', () => {
    const statements = [allow('dynamodb:Query', [`${TABLE}/index/orgUser-index`])];
    expect(evaluate(statements, query)).toBe('implicit-deny');
    expect(evaluate([allow('dynamodb:Query', TABLE)], query)).toBe('implicit-deny');
  });

  it('allows through an exact grant or a wildcard, and an explicit Deny wins', () => {
    expect(evaluate([allow('dynamodb:Query', `${TABLE}/index/board-index`)], query)).toBe('allow');
    expect(evaluate([allow('dynamodb:*', `${TABLE}/index/*`)], query)).toBe('allow');
    expect(
      evaluate(
        [allow('dynamodb:*', '*'), { Effect: 'Deny', Action: 'dynamodb:Query', Resource: '*' }],
        query,
      ),
    ).toBe('explicit-deny');
  });

  it('evaluates conditions on the request’s keys, an absent key failing StringEquals', () => {
    const get = (body: object) => checksFor('GetItem', { TableName: 'sessions', ...body }, arn)[0] as never;
    const statement = allow('dynamodb:GetItem', TABLE, {
      StringEquals: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
    });
    expect(evaluate([statement], get({ Select: 'SPECIFIC_ATTRIBUTES' }))).toBe('allow');
    expect(evaluate([statement], get({ Select: 'ALL_ATTRIBUTES' }))).toBe('implicit-deny');
    expect(evaluate([statement], get({}))).toBe('implicit-deny');
    const ifExists = allow('dynamodb:GetItem', TABLE, {
      StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
    });
    expect(evaluate([ifExists], get({}))).toBe('allow');
  });

  it('refuses to guess a condition operator it does not know', () => {
    const statement = allow('dynamodb:GetItem', TABLE, { DateGreaterThan: { 'aws:CurrentTime': '2020' } });
    expect(() =>
      evaluate([statement], checksFor('GetItem', { TableName: 'sessions' }, arn)[0] as never),
    ).toThrow(/not evaluated/);
  });

  it('lists the granted pairs no allowed call used', () => {
    const statements = [
      allow(['dynamodb:GetItem', 'dynamodb:PutItem'], TABLE),
      allow('logs:PutLogEvents', '*'),
    ];
    const used = checksFor('GetItem', { TableName: 'sessions' }, arn);
    expect(unusedGrants(statements, 'dynamodb', used)).toEqual([`dynamodb:PutItem on ${TABLE}`]);
  });
});
