// Preloaded with `node --import` before a function (bundled or from source) runs in a fresh process: it
// makes the SDK's request signing deterministic and records every DynamoDB request it signs, so two runs
// of the same request can be compared header for header.
//
// - The clock stands still at CAPTURE_TIME (SigV4 signs the time), and crypto.randomUUID returns a fixed
//   value (the SDK's amz-sdk-invocation-id header is signed too).
// - https.request is replaced, as the benchmark's stub does (test/bench/dynamo-stub.mjs): the request's
//   headers are recorded and DynamoDB answers `{}` (no item) without a socket. Any other network call
//   throws. The recorded requests are printed after a marker when the process exits.
// - Every file the process opens through node:fs or node:fs/promises under a `.aws` directory (the SDK's
//   shared config and credentials files) is recorded too, and printed after a second marker.
import fs from 'node:fs';
import fsPromises from 'node:fs/promises';
import { Readable } from 'node:stream';
import { answerHttpsWith, FakeClientRequest } from './fake-https.mjs';

export const CAPTURE_MARKER = '@@SIGNED@@';
export const CONFIG_READS_MARKER = '@@CONFIG_READS@@';
const NOW = Date.parse(process.env.CAPTURE_TIME ?? '2026-03-01T12:00:00.000Z');

const RealDate = Date;
class FrozenDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(NOW);
    else super(...args);
  }

  static now() {
    return NOW;
  }
}
globalThis.Date = FrozenDate;
Object.defineProperty(globalThis.crypto, 'randomUUID', {
  value: () => '00000000-0000-4000-8000-000000000000',
});

const captured = [];
const configReads = [];
process.on('exit', () => {
  process.stdout.write(`\n${CAPTURE_MARKER}${JSON.stringify(captured)}\n`);
  process.stdout.write(`\n${CONFIG_READS_MARKER}${JSON.stringify(configReads)}\n`);
});

/** Wraps a file-reading function so that a path under a `.aws` directory is recorded before it runs. */
function recorded(module, name) {
  const original = module[name];
  module[name] = function (path, ...rest) {
    if (/(^|[/\\])\.aws[/\\]/.test(String(path))) configReads.push(`${name} ${String(path)}`);
    return original.call(this, path, ...rest);
  };
}
for (const name of ['readFile', 'open']) recorded(fsPromises, name);
for (const name of ['readFile', 'readFileSync', 'open', 'openSync', 'createReadStream']) recorded(fs, name);

class CapturedRequest extends FakeClientRequest {
  end(chunk) {
    if (chunk !== undefined && chunk !== null) this.write(chunk);
    const { hostname, path, method, headers } = this.options;
    captured.push({ hostname, path, method, headers, body: this.body });
    const payload = Buffer.from('{}');
    const response = Readable.from([payload]);
    response.statusCode = 200;
    response.headers = {
      'content-type': 'application/x-amz-json-1.0',
      'content-length': String(payload.length),
      'x-amzn-requestid': 'captured',
    };
    queueMicrotask(() => this.emit('response', response));
    return this;
  }
}

answerHttpsWith(CapturedRequest, 'capture-signed-requests');
