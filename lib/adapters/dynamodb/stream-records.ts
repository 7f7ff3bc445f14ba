import type { Item } from '#lib/adapters/dynamodb/table';

/** One DynamoDB attribute value in the wire form streams carry (`{"S": "…"}`, `{"N": "1"}`, …). */
export type AttributeValue =
  | { S: string }
  | { N: string }
  | { BOOL: boolean }
  | { NULL: boolean }
  | { M: Record<string, AttributeValue> }
  | { L: AttributeValue[] }
  | { SS: string[] }
  | { NS: string[] }
  | { B: string }
  | { BS: string[] };

/**
 * A DynamoDB stream record as Lambda receives it (the fields this service reads of AWS's
 * `DynamoDBRecord`), with the view type NEW_AND_OLD_IMAGES.
 */
export interface StreamRecord {
  eventID?: string;
  eventName?: 'INSERT' | 'MODIFY' | 'REMOVE';
  dynamodb?: {
    Keys?: Record<string, AttributeValue>;
    NewImage?: Record<string, AttributeValue>;
    OldImage?: Record<string, AttributeValue>;
    SequenceNumber?: string;
  };
}

/** Lambda's answer to a stream batch: the records to retry from (it bisects and retries from the first). */
export interface BatchResponse {
  batchItemFailures: Array<{ itemIdentifier: string }>;
}

/** An item in wire form, as the document client would return it (numbers as numbers, sets as arrays). */
export function fromAttributeMap(map: Record<string, AttributeValue>): Item {
  const item: Item = {};
  for (const [name, value] of Object.entries(map)) item[name] = fromAttribute(value);
  return item;
}

function fromAttribute(value: AttributeValue): unknown {
  if ('S' in value) return value.S;
  if ('N' in value) return Number(value.N);
  if ('BOOL' in value) return value.BOOL;
  if ('NULL' in value) return null;
  if ('M' in value) return fromAttributeMap(value.M);
  if ('L' in value) return value.L.map(fromAttribute);
  if ('SS' in value) return [...value.SS];
  if ('NS' in value) return value.NS.map(Number);
  if ('B' in value) return Buffer.from(value.B, 'base64');
  if ('BS' in value) return value.BS.map((b) => Buffer.from(b, 'base64'));
  throw new Error(`unknown attribute value type: ${Object.keys(value).join(',')}`);
}

/** The reverse, for change feeds built from items (the local poller): the form a stream would carry. */
export function toAttributeMap(item: Item): Record<string, AttributeValue> {
  const map: Record<string, AttributeValue> = {};
  for (const [name, value] of Object.entries(item)) {
    if (value !== undefined) map[name] = toAttribute(value);
  }
  return map;
}

function toAttribute(value: unknown): AttributeValue {
  if (value === null) return { NULL: true };
  if (typeof value === 'string') return { S: value };
  if (typeof value === 'number') return { N: String(value) };
  if (typeof value === 'boolean') return { BOOL: value };
  if (Buffer.isBuffer(value)) return { B: value.toString('base64') };
  if (value instanceof Set) {
    const members = [...value];
    return typeof members[0] === 'number' ? { NS: members.map(String) } : { SS: members.map(String) };
  }
  if (Array.isArray(value)) return { L: value.map(toAttribute) };
  if (typeof value === 'object') return { M: toAttributeMap(value as Item) };
  throw new Error(`cannot carry a ${typeof value} in a stream image`);
}
