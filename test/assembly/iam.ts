/**
 * IAM, call by call: the authorization checks one DynamoDB API call needs (action, resource ARN, request
 * context), and an evaluation of identity-policy statements against them as IAM does (an explicit Deny
 * wins, else some Allow must match; wildcards in actions and resources; conditions).
 */
import type { Json } from './template';

/** One authorization IAM performs for a call: a DynamoDB request may need several. */
export interface Check {
  action: string;
  resource: string;
  /** Condition keys this request provides (absent keys are absent, as in IAM). */
  context: Record<string, string[]>;
}

/** What TransactWriteItems entries and BatchWriteItem requests are authorized as. */
const TRANSACT_ACTIONS: Record<string, string> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
  Get: 'GetItem',
};

/**
 * The checks a DynamoDB JSON request needs: one per table (and index) it touches, with the condition keys
 * it sets. `tableArn` turns a table name into its ARN.
 */
export function checksFor(operation: string, body: Json, tableArn: (name: string) => string): Check[] {
  const context = (extra: Record<string, string | undefined> = {}): Record<string, string[]> => {
    const keys: Record<string, string | undefined> = {
      'dynamodb:Select': body.Select,
      'dynamodb:ReturnValues': body.ReturnValues,
      'dynamodb:ReturnConsumedCapacity': body.ReturnConsumedCapacity,
      ...extra,
    };
    return Object.fromEntries(
      Object.entries(keys)
        .filter(([, value]) => value !== undefined)
        .map(([key, value]) => [key, [value as string]]),
    );
  };
  const action = (name: string) => `dynamodb:${name}`;
  switch (operation) {
    case 'BatchGetItem':
    case 'BatchWriteItem':
      return Object.keys(body.RequestItems ?? {}).map((table) => ({
        action: action(operation),
        resource: tableArn(table),
        context: context(),
      }));
    case 'TransactWriteItems':
    case 'TransactGetItems':
      return (body.TransactItems ?? []).map((item: Json) => {
        const [kind, request] = Object.entries(item)[0] as [string, Json];
        return {
          action: action(TRANSACT_ACTIONS[kind] ?? kind),
          resource: tableArn(request.TableName),
          context: context({ 'dynamodb:ReturnValues': request.ReturnValuesOnConditionCheckFailure }),
        };
      });
    case 'Query':
    case 'Scan': {
      const table = tableArn(body.TableName);
      return [
        {
          action: action(operation),
          resource: body.IndexName ? `${table}/index/${body.IndexName}` : table,
          context: context(),
        },
      ];
    }
    default:
      if (typeof body.TableName !== 'string') throw new Error(`${operation}: no TableName to authorize`);
      return [{ action: action(operation), resource: tableArn(body.TableName), context: context() }];
  }
}

function glob(pattern: string, flags = ''): RegExp {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`, flags);
}

const list = (value: unknown): string[] =>
  value === undefined ? [] : ([] as string[]).concat(value as string);

function matchesAction(statement: Json, action: string): boolean {
  if (statement.NotAction) return !list(statement.NotAction).some((a) => glob(a, 'i').test(action));
  return list(statement.Action).some((a) => glob(a, 'i').test(action));
}

function matchesResource(statement: Json, resource: string): boolean {
  if (statement.NotResource) return !list(statement.NotResource).some((r) => glob(r).test(resource));
  return list(statement.Resource).some((r) => glob(r).test(resource));
}

/** One condition operator applied to the request's values of one key, as IAM evaluates it. */
function conditionHolds(operator: string, values: string[] | undefined, expected: string[]): boolean {
  const ifExists = operator.endsWith('IfExists');
  const base = ifExists ? operator.slice(0, -'IfExists'.length) : operator;
  const [set, test] = base.includes(':') ? (base.split(':') as [string, string]) : [undefined, base];
  const compare: Record<string, (actual: string, wanted: string) => boolean> = {
    StringEquals: (a, w) => a === w,
    StringNotEquals: (a, w) => a !== w,
    StringEqualsIgnoreCase: (a, w) => a.toLowerCase() === w.toLowerCase(),
    StringLike: (a, w) => glob(w).test(a),
    StringNotLike: (a, w) => !glob(w).test(a),
    Bool: (a, w) => a.toLowerCase() === w.toLowerCase(),
  };
  const fn = compare[test];
  if (!fn) throw new Error(`condition operator ${operator} is not evaluated locally`);
  const negated = test.includes('Not');
  if (values === undefined || values.length === 0) {
    if (set === 'ForAllValues') return true;
    if (set === 'ForAnyValue') return false;
    return ifExists || negated;
  }
  const one = (actual: string) =>
    negated ? expected.every((wanted) => fn(actual, wanted)) : expected.some((wanted) => fn(actual, wanted));
  if (set === 'ForAllValues') return values.every(one);
  if (set === 'ForAnyValue') return values.some(one);
  if (set !== undefined) throw new Error(`condition set operator ${set} is not evaluated locally`);
  return values.length === 1 && one(values[0] as string);
}

function conditionsHold(statement: Json, context: Record<string, string[]>): boolean {
  for (const [operator, keys] of Object.entries((statement.Condition ?? {}) as Record<string, Json>)) {
    for (const [key, expected] of Object.entries(keys as Record<string, unknown>)) {
      if (!conditionHolds(operator, context[key], list(expected).map(String))) return false;
    }
  }
  return true;
}

export type Decision = 'allow' | 'explicit-deny' | 'implicit-deny';

/** Evaluates identity-policy statements for one check: an explicit Deny wins; without an Allow, denied. */
export function evaluate(statements: readonly Json[], check: Check): Decision {
  let allowed = false;
  for (const statement of statements) {
    if (!matchesAction(statement, check.action) || !matchesResource(statement, check.resource)) continue;
    if (!conditionsHold(statement, check.context)) continue;
    if (statement.Effect === 'Deny') return 'explicit-deny';
    if (statement.Effect === 'Allow') allowed = true;
  }
  return allowed ? 'allow' : 'implicit-deny';
}

/** Every (action, resource) pair the Allow statements grant for one service, wildcards as written. */
export function grants(statements: readonly Json[], service: string): { action: string; resource: string }[] {
  return statements
    .filter((statement) => statement.Effect === 'Allow' && !statement.NotAction && !statement.NotResource)
    .flatMap((statement) =>
      list(statement.Action)
        .filter((action) => action.toLowerCase().startsWith(`${service}:`))
        .flatMap((action) => list(statement.Resource).map((resource) => ({ action, resource }))),
    );
}

/** The granted pairs that no allowed check used (a check uses a grant when the grant alone would allow it). */
export function unusedGrants(statements: readonly Json[], service: string, used: readonly Check[]): string[] {
  return grants(statements, service)
    .filter(
      ({ action, resource }) =>
        !used.some((check) => glob(action, 'i').test(check.action) && glob(resource).test(check.resource)),
    )
    .map(({ action, resource }) => `${action} on ${resource}`);
}
