// The in-memory DynamoDB tables behind both benchmark stubs: plain items, seeded from the BENCH_SEED
// environment variable that run.ts sets (see scenarios.ts), and one call counter per process.

/**
 * Calls answered in this process, by operation. It lives on globalThis because the send-level stub is
 * bundled into the measured bundle, a separate module instance from the one child.mjs imports.
 */
const STATS = Symbol.for('bench.dynamo.stats');
globalThis[STATS] ??= { calls: 0, byOperation: {} };
export const stats = globalThis[STATS];

/** Table name -> { keys, items: Map<key string, item> }. */
const tables = new Map();
for (const { name, keys, items } of JSON.parse(process.env.BENCH_SEED ?? '[]')) {
  const table = { keys, items: new Map() };
  for (const item of items) table.items.set(keyOf(table, item), item);
  tables.set(name, table);
}

function keyOf(table, item) {
  return JSON.stringify(table.keys.map((k) => item[k] ?? null));
}

function tableOf(name) {
  const table = tables.get(name);
  if (!table) throw new Error(`bench stub: unknown table ${name}`);
  return table;
}

function count(operation) {
  stats.calls++;
  stats.byOperation[operation] = (stats.byOperation[operation] ?? 0) + 1;
}

/** Raised for the one DynamoDB error the service expects (a failed `attribute_not_exists` put). */
export class ConditionalCheckFailed extends Error {
  name = 'ConditionalCheckFailedException';
}

/** GetItem: the item with `key`, narrowed to a simple comma-separated ProjectionExpression. */
export function getItem(tableName, key, projection) {
  count('GetItem');
  const item = tableOf(tableName).items.get(keyOf(tableOf(tableName), key));
  if (!item || !projection) return item;
  const picked = {};
  for (const name of projection.split(',').map((s) => s.trim())) if (name in item) picked[name] = item[name];
  return picked;
}

/** PutItem, honouring `attribute_not_exists(...)`, the only condition this service writes with. */
export function putItem(tableName, item, condition) {
  count('PutItem');
  const table = tableOf(tableName);
  const key = keyOf(table, item);
  if (/^attribute_not_exists\(/.test(condition ?? '') && table.items.has(key)) {
    throw new ConditionalCheckFailed('The conditional request failed');
  }
  table.items.set(key, item);
}

/** Query by one equality condition (`attribute = :value`), on the table or an index alike. */
export function query(tableName, keyCondition, values, limit) {
  count('Query');
  const match = /^\s*(\w+)\s*=\s*(:\w+)\s*$/.exec(keyCondition ?? '');
  if (!match) throw new Error(`bench stub: unsupported KeyConditionExpression ${keyCondition}`);
  const [, attribute, placeholder] = match;
  const wanted = values?.[placeholder];
  const items = [];
  for (const item of tableOf(tableName).items.values()) {
    if (item[attribute] === wanted) items.push(item);
    if (limit && items.length >= limit) break;
  }
  return items;
}
