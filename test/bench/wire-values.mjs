// DynamoDB's JSON wire form of requests and answers, to and from the plain values the in-memory tables
// hold: for the https-level stub (dynamo-stub.mjs) and for the commands the adapters send without the
// document client's marshalling (sdk-stub.mjs).

/** The wire (DynamoDB JSON) request of an operation in plain form, and its plain answer back on the wire. */
export function plainInput(input) {
  const plain = { ...input };
  for (const field of ['Key', 'Item', 'ExpressionAttributeValues', 'ExclusiveStartKey']) {
    if (plain[field] !== undefined) plain[field] = unmarshall(plain[field]);
  }
  if (plain.RequestItems !== undefined) {
    plain.RequestItems = Object.fromEntries(
      Object.entries(plain.RequestItems).map(([table, request]) => [
        table,
        { ...request, Keys: request.Keys?.map(unmarshall) },
      ]),
    );
  }
  return plain;
}

export function wireOutput(output) {
  const wire = { ...output };
  for (const field of ['Item', 'Attributes', 'LastEvaluatedKey']) {
    if (wire[field] !== undefined) wire[field] = marshall(wire[field]);
  }
  if (wire.Items !== undefined) wire.Items = wire.Items.map(marshall);
  if (wire.Responses !== undefined) {
    wire.Responses = Object.fromEntries(
      Object.entries(wire.Responses).map(([table, items]) => [table, items.map(marshall)]),
    );
  }
  return wire;
}

/** DynamoDB JSON of a plain item (the types this service stores). */
function marshall(item) {
  const out = {};
  for (const [name, value] of Object.entries(item)) out[name] = toAttribute(value);
  return out;
}

function toAttribute(value) {
  if (value === null || value === undefined) return { NULL: true };
  if (typeof value === 'number') return { N: String(value) };
  if (typeof value === 'boolean') return { BOOL: value };
  if (Array.isArray(value)) return { L: value.map(toAttribute) };
  if (typeof value === 'object') return { M: marshall(value) };
  return { S: String(value) };
}

/** The plain item of a DynamoDB JSON map. */
function unmarshall(map) {
  const out = {};
  for (const [name, attribute] of Object.entries(map)) out[name] = fromAttribute(attribute);
  return out;
}

function fromAttribute(attribute) {
  if ('S' in attribute) return attribute.S;
  if ('N' in attribute) return Number(attribute.N);
  if ('BOOL' in attribute) return attribute.BOOL;
  if ('NULL' in attribute) return null;
  if ('L' in attribute) return attribute.L.map(fromAttribute);
  if ('M' in attribute) return unmarshall(attribute.M);
  throw new Error(`wire-values: unsupported attribute ${JSON.stringify(attribute)}`);
}
