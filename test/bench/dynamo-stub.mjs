// Zero-latency, in-process DynamoDB for the benchmark, imported by child.mjs before the bundle.
//
// The bundles talk to DynamoDB exactly as in Lambda: regional https endpoint, credentials from the
// environment, SigV4 signing, the SDK's own NodeHttpHandler. That handler calls `https.request` on the
// `node:https` module object at request time, so replacing that one property here answers every request
// from an in-memory table without opening a socket, while all of the SDK's work (endpoint rules,
// credential chain, signing, serialization, retries bookkeeping, parsing) still runs inside the bundle.
// Any call to `http.request` / `http.get` / `https.get` is a mistake (a real network call) and throws.
import { EventEmitter } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import { syncBuiltinESMExports } from 'node:module';
import { Readable } from 'node:stream';
import { ConditionalCheckFailed, getItem, putItem, query } from './memory-tables.mjs';

const OPERATIONS = {
  GetItem: (input) => {
    const item = getItem(input.TableName, unmarshall(input.Key), input.ProjectionExpression);
    return item ? { Item: marshall(item) } : {};
  },
  PutItem: (input) => {
    putItem(input.TableName, unmarshall(input.Item), input.ConditionExpression);
    return {};
  },
  Query: (input) => {
    const values = input.ExpressionAttributeValues && unmarshall(input.ExpressionAttributeValues);
    const items = query(input.TableName, input.KeyConditionExpression, values, input.Limit).map(marshall);
    return { Items: items, Count: items.length, ScannedCount: items.length };
  },
};

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
  throw new Error(`dynamo-stub: unsupported attribute ${JSON.stringify(attribute)}`);
}

let requestCounter = 0;

/** Answers one DynamoDB JSON request with `{status, body}`. */
function answer(target, bodyText) {
  const operation = String(target).replace(/^DynamoDB_20120810\./, '');
  const handler = OPERATIONS[operation];
  if (!handler) throw new Error(`dynamo-stub: unsupported operation ${target}`);
  try {
    return { status: 200, body: handler(JSON.parse(bodyText)) };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailed)) throw error;
    return {
      status: 400,
      body: { __type: `com.amazonaws.dynamodb.v20120810#${error.name}`, message: error.message },
    };
  }
}

/** Stands in for the socket the SDK's timeouts attach to; it is never connecting, so they clear at once. */
const FAKE_SOCKET = {
  connecting: false,
  setTimeout() {},
  setKeepAlive() {},
  setNoDelay() {},
  removeListener() {},
  on() {},
  once() {},
  destroy() {},
};

/** The slice of `http.ClientRequest` that @smithy/node-http-handler uses. */
class StubRequest extends EventEmitter {
  socket = FAKE_SOCKET;
  destroyed = false;
  #chunks = [];

  constructor(options, onResponse) {
    super();
    this.options = options;
    if (onResponse) this.once('response', onResponse);
  }

  setTimeout() {
    return this;
  }

  write(chunk) {
    this.#chunks.push(Buffer.from(chunk));
    return true;
  }

  end(chunk) {
    if (chunk !== undefined && chunk !== null) this.write(chunk);
    const headers = this.options.headers ?? {};
    const target = headers['x-amz-target'] ?? headers['X-Amz-Target'];
    let result;
    try {
      result = answer(target, Buffer.concat(this.#chunks).toString('utf8'));
    } catch (error) {
      // A bug in the benchmark, not a DynamoDB error: make it loud.
      queueMicrotask(() => this.emit('error', error));
      return this;
    }
    const payload = Buffer.from(JSON.stringify(result.body));
    const response = new Readable({
      read() {
        this.push(payload);
        this.push(null);
      },
    });
    response.statusCode = result.status;
    response.statusMessage = result.status === 200 ? 'OK' : 'Bad Request';
    response.headers = {
      'content-type': 'application/x-amz-json-1.0',
      'content-length': String(payload.length),
      'x-amzn-requestid': `stub-${++requestCounter}`,
    };
    response.complete = true;
    queueMicrotask(() => {
      this.emit('response', response);
      response.once('end', () => this.emit('close'));
    });
    return this;
  }

  destroy(error) {
    this.destroyed = true;
    if (error) this.emit('error', error);
    return this;
  }

  abort() {
    this.destroy();
  }
}

const noNetwork = (name) => () => {
  throw new Error(`dynamo-stub: unexpected network call through ${name}`);
};

https.request = (options, onResponse) => {
  if (typeof options === 'string' || options instanceof URL) return noNetwork('https.request(url)')();
  return new StubRequest(options, onResponse);
};
https.get = noNetwork('https.get');
http.request = noNetwork('http.request');
http.get = noNetwork('http.get');
// Named ESM imports of node:http(s) are separate bindings; bring them in line with the patched objects.
syncBuiltinESMExports();
