// In-process DynamoDB for the benchmark, imported by child.mjs before the bundle; it answers at once.
//
// The bundles talk to DynamoDB exactly as in Lambda: regional https endpoint, credentials from the
// environment, SigV4 signing, the SDK's own NodeHttpHandler. That handler calls `https.request` on the
// `node:https` module object at request time, so replacing that one property here answers every request
// from an in-memory table without opening a socket, while all of the SDK's work (endpoint rules,
// credential chain, signing, serialization, retries bookkeeping, parsing) still runs inside the bundle.
// Any call to `http.request` / `http.get` / `https.get` is a mistake (a real network call) and throws.
import { Readable } from 'node:stream';
import { answerHttpsWith, FakeClientRequest } from '../support/fake-https.mjs';
import { ConditionalCheckFailed, execute } from './memory-tables.mjs';
import { plainInput, wireOutput } from './wire-values.mjs';

let requestCounter = 0;

/** Answers one DynamoDB JSON request with `{status, body}`. */
function answer(target, bodyText) {
  const match = /^DynamoDB_20120810\.(\w+)$/.exec(String(target));
  if (!match) throw new Error(`dynamo-stub: unsupported target ${target}`);
  try {
    return { status: 200, body: wireOutput(execute(match[1], plainInput(JSON.parse(bodyText)))) };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailed)) throw error;
    return {
      status: 400,
      body: {
        __type: `com.amazonaws.dynamodb.v20120810#${error.name}`,
        message: error.message,
        ...(error.item ? { Item: wireOutput({ Item: error.item }).Item } : {}),
      },
    };
  }
}

/** A request to DynamoDB, answered from the in-memory tables when it ends. */
class StubRequest extends FakeClientRequest {
  end(chunk) {
    if (chunk !== undefined && chunk !== null) this.write(chunk);
    const headers = this.options.headers ?? {};
    const target = headers['x-amz-target'] ?? headers['X-Amz-Target'];
    let result;
    try {
      result = answer(target, this.body);
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
    const respond = () => {
      this.emit('response', response);
      response.once('end', () => this.emit('close'));
    };
    queueMicrotask(respond);
    return this;
  }
}

answerHttpsWith(StubRequest, 'dynamo-stub');
