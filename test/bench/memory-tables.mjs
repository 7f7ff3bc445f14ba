// The in-memory DynamoDB behind the benchmark's stub: plain (unmarshalled) items, seeded from the JSON
// file named by BENCH_SEED (run.ts writes it from scenarios.ts), and one call counter per process.
//
// It answers exactly the requests lib/adapters/dynamodb sends on the functions' cold paths, with DynamoDB's semantics
// where they change what the service sees (consistent reads, conditional writes, index projections,
// Limit applied before the filter, LastEvaluatedKey whenever Limit was reached). Any other request shape
// throws: a request the stub does not know is a change the benchmark has to follow, never something to
// answer approximately.
import { readFileSync } from 'node:fs';

const state = {
  stats: { calls: 0, byOperation: {} },
  tables: loadTables(process.env.BENCH_SEED),
};
export const stats = state.stats;

/** BatchGetItem reads at most 100 keys per call; more is a ValidationException in DynamoDB. */
const BATCH_GET_LIMIT = 100;

/** Raised for the one DynamoDB error the service expects (a failed condition on a write). */
export class ConditionalCheckFailed extends Error {
  name = 'ConditionalCheckFailedException';

  /** The refused item, when the request asked for it (ReturnValuesOnConditionCheckFailure: ALL_OLD). */
  constructor(message, item) {
    super(message);
    this.item = item;
  }
}

/** A request DynamoDB would refuse or the stub does not implement: a bug in the service or the bench. */
class Unsupported extends Error {
  name = 'BenchStubUnsupported';
}

function loadTables(seedFile) {
  const tables = new Map();
  const seed = seedFile ? JSON.parse(readFileSync(seedFile, 'utf8')) : [];
  for (const { name, keys, indexes, items } of seed) {
    const table = {
      name,
      keys,
      // The base table as an "index" too, for a Query without IndexName.
      indexes: new Map([
        ['', { partitionKey: keys[0], sortKey: keys[1], projection: 'ALL' }],
        ...(indexes ?? []).map((index) => [index.name, index]),
      ]),
      items: new Map(),
      /** Index name -> partition value -> item keys sorted by the index's sort key. Rebuilt after writes. */
      sorted: new Map(),
    };
    for (const item of items) table.items.set(keyOf(table, item), item);
    tables.set(name, table);
  }
  return tables;
}

function keyOf(table, item) {
  return JSON.stringify(table.keys.map((k) => item[k] ?? null));
}

function tableOf(name) {
  const table = state.tables.get(name);
  if (!table) throw new Unsupported(`bench stub: unknown table ${name}`);
  return table;
}

function count(operation) {
  stats.calls++;
  stats.byOperation[operation] = (stats.byOperation[operation] ?? 0) + 1;
}

/** Refuses any input field outside `allowed` (undefined values are absent, as on the wire). */
function onlyFields(operation, input, allowed) {
  for (const [name, value] of Object.entries(input)) {
    if (value !== undefined && !allowed.includes(name)) {
      throw new Unsupported(`bench stub: ${operation} with ${name} is not implemented`);
    }
  }
}

/** A Key must name exactly the table's key attributes. */
function checkKey(table, key) {
  const names = Object.keys(key ?? {}).sort();
  if (names.join() !== [...table.keys].sort().join()) {
    throw new Unsupported(`bench stub: key ${JSON.stringify(key)} does not match ${table.name}'s keys`);
  }
}

function placeholderValue(values, placeholder) {
  if (!values || !(placeholder in values)) throw new Unsupported(`bench stub: no value for ${placeholder}`);
  return values[placeholder];
}

/** `a, b, c` -> the attribute names; nested paths and #names are not used by this service. */
function projectionNames(expression) {
  const names = expression.split(',').map((s) => s.trim());
  if (names.some((name) => !/^\w+$/.test(name))) {
    throw new Unsupported(`bench stub: unsupported ProjectionExpression ${expression}`);
  }
  return names;
}

function pick(item, names) {
  const picked = {};
  for (const name of names) if (name in item) picked[name] = item[name];
  return picked;
}

/** Replaces (or deletes, with `item` undefined) the item under `key`. */
function write(table, key, item) {
  store(table, key, item, table.items.get(key));
}

function store(table, key, item, previous) {
  if (item === undefined) table.items.delete(key);
  else table.items.set(key, item);
  if (indexKeysChanged(table, previous, item)) table.sorted.clear();
}

function indexKeysChanged(table, before, after) {
  if (before === undefined || after === undefined) return before !== after;
  for (const index of table.indexes.values()) {
    if (before[index.partitionKey] !== after[index.partitionKey]) return true;
    if (index.sortKey && before[index.sortKey] !== after[index.sortKey]) return true;
  }
  return false;
}

/** `attribute_exists(a) AND attribute_not_exists(b) …`: the only condition form the request paths use. */
function conditionHolds(expression, item, names = {}, values = {}) {
  for (const term of expression.split(/\s+AND\s+/)) {
    // An attribute equal to a value: a write conditional on the revision it read.
    const equals = /^\s*(#?\w+)\s*=\s*(:\w+)\s*$/.exec(term);
    if (equals) {
      const name = equals[1].startsWith('#') ? names[equals[1]] : equals[1];
      if (name === undefined) throw new Unsupported(`bench stub: no name for ${equals[1]}`);
      if (
        item === undefined ||
        JSON.stringify(item[name]) !== JSON.stringify(placeholderValue(values, equals[2]))
      )
        return false;
      continue;
    }
    const match = /^\s*(attribute_exists|attribute_not_exists)\((\w+)\)\s*$/.exec(term);
    if (!match) throw new Unsupported(`bench stub: unsupported ConditionExpression ${expression}`);
    const present = item !== undefined && item[match[2]] !== undefined;
    if (present !== (match[1] === 'attribute_exists')) return false;
  }
  return true;
}

const OPERATIONS = {
  GetItem(input) {
    onlyFields('GetItem', input, ['TableName', 'Key', 'ProjectionExpression', 'ConsistentRead']);
    const table = tableOf(input.TableName);
    checkKey(table, input.Key);
    const item = table.items.get(keyOf(table, input.Key));
    if (!item) return {};
    return {
      Item: input.ProjectionExpression
        ? pick(item, projectionNames(input.ProjectionExpression))
        : { ...item },
    };
  },

  BatchGetItem(input) {
    onlyFields('BatchGetItem', input, ['RequestItems']);
    const responses = {};
    let total = 0;
    for (const [name, request] of Object.entries(input.RequestItems ?? {})) {
      onlyFields('BatchGetItem', request, ['Keys', 'ConsistentRead', 'ProjectionExpression']);
      const table = tableOf(name);
      const seen = new Set();
      responses[name] = [];
      for (const key of request.Keys ?? []) {
        checkKey(table, key);
        const id = keyOf(table, key);
        // DynamoDB refuses the whole batch: "Provided list of item keys contains duplicates".
        if (seen.has(id)) throw new Unsupported(`bench stub: BatchGetItem with a duplicate key ${id}`);
        seen.add(id);
        total++;
        const item = table.items.get(id);
        if (item) {
          responses[name].push(
            request.ProjectionExpression
              ? pick(item, projectionNames(request.ProjectionExpression))
              : { ...item },
          );
        }
      }
    }
    if (total === 0 || total > BATCH_GET_LIMIT) {
      throw new Unsupported(
        `bench stub: BatchGetItem of ${total} keys (DynamoDB takes 1 to ${BATCH_GET_LIMIT})`,
      );
    }
    // Never throttled here, so nothing is left unprocessed.
    return { Responses: responses, UnprocessedKeys: {} };
  },

  PutItem(input) {
    onlyFields('PutItem', input, [
      'TableName',
      'Item',
      'ConditionExpression',
      'ReturnValuesOnConditionCheckFailure',
    ]);
    const table = tableOf(input.TableName);
    const key = keyOf(table, input.Item);
    const condition = input.ConditionExpression;
    // The request paths write new items only: `attribute_not_exists(<partition key>)`.
    if (condition !== undefined && condition !== `attribute_not_exists(${table.keys[0]})`) {
      throw new Unsupported(`bench stub: unsupported PutItem condition ${condition}`);
    }
    if (condition !== undefined && table.items.has(key)) {
      const old = input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' ? table.items.get(key) : undefined;
      throw new ConditionalCheckFailed('The conditional request failed', old && { ...old });
    }
    write(table, key, { ...input.Item });
    return {};
  },

  UpdateItem(input) {
    onlyFields('UpdateItem', input, [
      'TableName',
      'Key',
      'UpdateExpression',
      'ConditionExpression',
      'ExpressionAttributeNames',
      'ExpressionAttributeValues',
      'ReturnValues',
    ]);
    const table = tableOf(input.TableName);
    checkKey(table, input.Key);
    const key = keyOf(table, input.Key);
    const current = table.items.get(key);
    if (
      input.ConditionExpression !== undefined &&
      !conditionHolds(
        input.ConditionExpression,
        current,
        input.ExpressionAttributeNames,
        input.ExpressionAttributeValues,
      )
    ) {
      throw new ConditionalCheckFailed('The conditional request failed');
    }
    // SET a list of assignments, then optionally REMOVE a list of names (a cut-off record's write).
    const set = /^SET\s+(.+?)(?:\s+REMOVE\s+(.+))?$/.exec(input.UpdateExpression ?? '');
    if (!set) throw new Unsupported(`bench stub: unsupported UpdateExpression ${input.UpdateExpression}`);
    const updated = { ...(current ?? input.Key) };
    for (const removed of set[2]?.split(',') ?? []) {
      const token = removed.trim();
      const name = token.startsWith('#') ? input.ExpressionAttributeNames?.[token] : token;
      if (name === undefined || table.keys.includes(name)) {
        throw new Unsupported(`bench stub: unsupported UpdateExpression ${input.UpdateExpression}`);
      }
      delete updated[name];
    }
    for (const assignment of set[1].split(',')) {
      const match = /^\s*(#?\w+)\s*=\s*(:\w+)\s*$/.exec(assignment);
      if (!match) throw new Unsupported(`bench stub: unsupported UpdateExpression ${input.UpdateExpression}`);
      // A #name stands for an attribute name that is not a plain word (a cut-off entry's `entry:<id>`).
      const name = match[1].startsWith('#') ? input.ExpressionAttributeNames?.[match[1]] : match[1];
      if (name === undefined) throw new Unsupported(`bench stub: no name for ${match[1]}`);
      if (table.keys.includes(name)) throw new Unsupported(`bench stub: UpdateItem cannot set key ${name}`);
      updated[name] = placeholderValue(input.ExpressionAttributeValues, match[2]);
    }
    write(table, key, updated);
    if (input.ReturnValues === 'ALL_NEW') return { Attributes: { ...updated } };
    if (input.ReturnValues === undefined || input.ReturnValues === 'NONE') return {};
    throw new Unsupported(`bench stub: unsupported ReturnValues ${input.ReturnValues}`);
  },

  Query(input) {
    onlyFields('Query', input, [
      'TableName',
      'IndexName',
      'KeyConditionExpression',
      'ExpressionAttributeValues',
      'FilterExpression',
      'ProjectionExpression',
      'ScanIndexForward',
      'Limit',
      'ExclusiveStartKey',
      'ConsistentRead',
    ]);
    const table = tableOf(input.TableName);
    // DynamoDB refuses a consistent read of a global secondary index.
    if (input.ConsistentRead && input.IndexName !== undefined)
      throw new Unsupported('bench stub: ConsistentRead on a global secondary index');
    const index = table.indexes.get(input.IndexName ?? '');
    if (!index) throw new Unsupported(`bench stub: ${table.name} has no index ${input.IndexName}`);
    const values = input.ExpressionAttributeValues;

    // `pk = :v`, optionally `AND sk < :w`: the partition equality and the "older than" page boundary.
    const match = /^\s*(\w+)\s*=\s*(:\w+)\s*(?:AND\s+(\w+)\s*<\s*(:\w+)\s*)?$/.exec(
      input.KeyConditionExpression ?? '',
    );
    if (!match || match[1] !== index.partitionKey || (match[3] !== undefined && match[3] !== index.sortKey)) {
      throw new Unsupported(`bench stub: unsupported KeyConditionExpression ${input.KeyConditionExpression}`);
    }
    const partition = placeholderValue(values, match[2]);
    const below = match[4] === undefined ? undefined : placeholderValue(values, match[4]);

    const filter =
      input.FilterExpression === undefined ? undefined : filterOf(input.FilterExpression, values);

    // The partition in ascending sort-key order; `below` bounds it by binary search, and a page walks it
    // by position, so paging through 100,000 sessions costs the stub time linear in what it returns.
    const ascending = sortedKeys(table, input.IndexName ?? '', index, partition);
    let end = ascending.length;
    if (below !== undefined) end = lowerBound(table, ascending, index.sortKey, below);
    const forward = input.ScanIndexForward !== false;
    let position = forward ? 0 : end - 1;
    if (input.ExclusiveStartKey !== undefined) {
      const start = ascending.indexOf(keyOf(table, input.ExclusiveStartKey));
      if (start < 0 || start >= end)
        throw new Unsupported('bench stub: ExclusiveStartKey is not in this partition');
      position = forward ? start + 1 : start - 1;
    }

    const projected = projectionOf(table, index, input.IndexName, input.ProjectionExpression);
    const items = [];
    let evaluated = 0;
    let last;
    for (; forward ? position < end : position >= 0; position += forward ? 1 : -1) {
      const item = table.items.get(ascending[position]);
      // Limit counts the items read, before the filter: a filtered page can be short, even empty.
      if (input.Limit !== undefined && evaluated === input.Limit) break;
      evaluated++;
      last = item;
      if (filter && !filter(item)) continue;
      items.push(projected ? pick(item, projected) : { ...item });
    }
    const output = { Items: items, Count: items.length, ScannedCount: evaluated };
    // As DynamoDB does, a page that reached Limit has a LastEvaluatedKey even if nothing follows it.
    if (input.Limit !== undefined && evaluated === input.Limit && last) {
      output.LastEvaluatedKey = pick(last, [
        ...new Set([...table.keys, index.partitionKey, index.sortKey].filter(Boolean)),
      ]);
    }
    return output;
  },
};

/**
 * A FilterExpression as a predicate: `AND` of the terms the service sends, `a = :v`, `a > :v`,
 * `attribute_not_exists(a)` and `NOT a IN (:v, …)`. A comparison with a missing attribute is false, as in
 * DynamoDB.
 */
function filterOf(expression, values) {
  const terms = expression.split(/\s+AND\s+/).map((term) => {
    let m = /^\s*(\w+)\s*(=|>)\s*(:\w+)\s*$/.exec(term);
    if (m) {
      const [, name, op, placeholder] = m;
      const value = placeholderValue(values, placeholder);
      return (item) => item[name] !== undefined && (op === '=' ? item[name] === value : item[name] > value);
    }
    m = /^\s*attribute_not_exists\((\w+)\)\s*$/.exec(term);
    if (m) {
      const name = m[1];
      return (item) => item[name] === undefined;
    }
    m = /^\s*NOT\s+(\w+)\s+IN\s*\(([^)]*)\)\s*$/.exec(term);
    if (m) {
      const name = m[1];
      const list = m[2].split(',').map((p) => placeholderValue(values, p.trim()));
      return (item) => item[name] === undefined || !list.includes(item[name]);
    }
    throw new Unsupported(`bench stub: unsupported FilterExpression ${expression}`);
  });
  return (item) => terms.every((term) => term(item));
}

/** The first position in `keys` (ascending by `sortKey`) whose item's sort key is not below `value`. */
function lowerBound(table, keys, sortKey, value) {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (table.items.get(keys[mid])[sortKey] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The attributes a Query returns: the index's projection, narrowed by a ProjectionExpression. */
function projectionOf(table, index, indexName, expression) {
  let names;
  if (indexName !== undefined && index.projection !== 'ALL') {
    names = [
      ...new Set([...table.keys, index.partitionKey, index.sortKey, ...(index.projection.include ?? [])]),
    ].filter(Boolean);
  }
  if (expression === undefined) return names;
  const wanted = projectionNames(expression);
  // A global secondary index can only return what it projects.
  const missing = names ? wanted.filter((name) => !names.includes(name)) : [];
  if (missing.length > 0)
    throw new Unsupported(`bench stub: ${indexName} does not project ${missing.join(', ')}`);
  return wanted;
}

/** The keys of the items in one partition of an index, in ascending sort-key order (sparse: only items with the keys). */
function sortedKeys(table, indexName, index, partition) {
  let byPartition = table.sorted.get(indexName);
  if (!byPartition) {
    byPartition = new Map();
    for (const [key, item] of table.items) {
      const value = item[index.partitionKey];
      if (value === undefined || (index.sortKey && item[index.sortKey] === undefined)) continue;
      const list = byPartition.get(value) ?? [];
      list.push(key);
      byPartition.set(value, list);
    }
    if (index.sortKey) {
      const sortValue = (key) => table.items.get(key)[index.sortKey];
      for (const list of byPartition.values()) {
        list.sort((a, b) => (sortValue(a) < sortValue(b) ? -1 : sortValue(a) > sortValue(b) ? 1 : 0));
      }
    }
    table.sorted.set(indexName, byPartition);
  }
  return byPartition.get(partition) ?? [];
}

/**
 * Runs one DynamoDB operation on plain (document-client) input and returns its plain output; throws
 * ConditionalCheckFailed for a failed condition and an error for anything the stub does not implement.
 */
export function execute(operation, input) {
  const run = OPERATIONS[operation];
  if (!run) throw new Unsupported(`bench stub: unsupported operation ${operation}`);
  count(operation);
  return run(input);
}
