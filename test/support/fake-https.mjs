// `https.request` answered in process, for the benchmark's DynamoDB stub (test/bench/dynamo-stub.mjs)
// and the signed-request capture (capture-signed-requests.mjs): the SDK's NodeHttpHandler calls
// `https.request` on the `node:https` module object at request time, so replacing that one property
// answers every request without a socket, while all of the SDK's own work still runs. Any other network
// call is a mistake (a real network call) and throws.
import { EventEmitter } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import { syncBuiltinESMExports } from 'node:module';

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

/** The slice of `http.ClientRequest` that @smithy/node-http-handler uses; a subclass answers in `end`. */
export class FakeClientRequest extends EventEmitter {
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

  /** Everything written to the request so far, as text. */
  get body() {
    return Buffer.concat(this.#chunks).toString('utf8');
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

/** Answers every `https.request` with a `Request` (a FakeClientRequest); `who` names the culprit of any other call. */
export function answerHttpsWith(Request, who) {
  const noNetwork = (name) => () => {
    throw new Error(`${who}: unexpected network call through ${name}`);
  };
  https.request = (options, onResponse) => {
    if (typeof options === 'string' || options instanceof URL) return noNetwork('https.request(url)')();
    return new Request(options, onResponse);
  };
  https.get = noNetwork('https.get');
  http.request = noNetwork('http.request');
  http.get = noNetwork('http.get');
  // Named ESM imports of node:http(s) are separate bindings; bring them in line with the patched objects.
  syncBuiltinESMExports();
}
