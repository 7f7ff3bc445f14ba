/**
 * A call of an AWS JSON protocol API (EventBridge `AWSEvents`, SQS `AmazonSQS`), signed with the SigV4
 * signer and credential provider every Lambda bundle already holds for DynamoDB, as lib/signing/kms-json.ts
 * does for KMS: the two operations the event pipeline sends (`PutEvents`, `SendMessage`) do not need an SDK
 * client each.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';

type Credentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string };

/** Limits of every call: an attempt that hangs is abandoned and tried again, 3 attempts in all. */
export const AWS_JSON_LIMITS = { requestTimeoutMs: 3_000, maxAttempts: 3 } as const;

/** One JSON protocol service: its SigV4 name, its target prefix and JSON version. */
export interface AwsJsonService {
  /** The signing name and the endpoint's first label: `events`, `sqs`. */
  signingName: string;
  /** `X-Amz-Target` prefix: `AWSEvents`, `AmazonSQS`. */
  targetPrefix: string;
  /** `1.1` (EventBridge) or `1.0` (SQS). */
  jsonVersion: '1.0' | '1.1';
}

export const EVENTBRIDGE: AwsJsonService = {
  signingName: 'events',
  targetPrefix: 'AWSEvents',
  jsonVersion: '1.1',
};
export const SQS: AwsJsonService = { signingName: 'sqs', targetPrefix: 'AmazonSQS', jsonVersion: '1.0' };

export interface AwsJsonOptions {
  region: string;
  /** Another endpoint than `https://{signingName}.{region}.amazonaws.com/` (a fake in tests). */
  endpoint?: string;
  credentials?: Credentials | (() => Promise<Credentials>);
}

/** An error the service answered (`__type`, `message`), or a transport failure once attempts ran out. */
export class AwsJsonError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status?: number,
  ) {
    super(`${code}: ${message}`);
    this.name = 'AwsJsonError';
  }
}

/** Sends one operation of a JSON protocol service; answers its parsed output. */
export type AwsJsonCall = (
  operation: string,
  input: Record<string, unknown>,
) => Promise<Record<string, unknown>>;

class Sha256 {
  readonly #hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(toBytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return this.#hash.digest();
  }
}

const RETRIED_CODES = new Set([
  'ThrottlingException',
  'InternalFailure',
  'ServiceUnavailable',
  'RequestThrottled',
]);

/** A signed caller of one service in one region. */
export function awsJsonCall(service: AwsJsonService, options: AwsJsonOptions): AwsJsonCall {
  const url = new URL(options.endpoint ?? `https://${service.signingName}.${options.region}.amazonaws.com/`);
  const given = options.credentials;
  const signer = new SignatureV4({
    service: service.signingName,
    region: options.region,
    sha256: Sha256,
    credentials: typeof given === 'function' ? given : given ? async () => given : defaultProvider(),
    applyChecksum: false,
  });

  const attempt = async (operation: string, body: string) => {
    const signed = await signer.sign({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query: {},
      headers: {
        host: url.host,
        'content-type': `application/x-amz-json-${service.jsonVersion}`,
        'x-amz-target': `${service.targetPrefix}.${operation}`,
        'content-length': String(Buffer.byteLength(body)),
      },
      body,
    });
    const { status, text } = await post(url, signed.headers, body);
    const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    if (status >= 200 && status < 300) return parsed;
    const type = String(parsed.__type ?? parsed.code ?? `HTTP ${status}`);
    throw new AwsJsonError(
      type.slice(type.lastIndexOf('#') + 1),
      String(parsed.message ?? parsed.Message ?? ''),
      status,
    );
  };

  return async (operation, input) => {
    const body = JSON.stringify(input);
    let failure: unknown;
    for (let round = 1; round <= AWS_JSON_LIMITS.maxAttempts; round++) {
      try {
        return await attempt(operation, body);
      } catch (error) {
        failure = error;
        const retried =
          !(error instanceof AwsJsonError) || RETRIED_CODES.has(error.code) || (error.status ?? 0) >= 500;
        if (!retried || round === AWS_JSON_LIMITS.maxAttempts) break;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 100 * 2 ** (round - 1)));
      }
    }
    throw failure;
  };
}

function post(
  url: URL,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    const req = send(url, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    const overall = setTimeout(
      () =>
        req.destroy(new Error(`${url.host} answered nothing within ${AWS_JSON_LIMITS.requestTimeoutMs} ms`)),
      AWS_JSON_LIMITS.requestTimeoutMs,
    );
    req.on('close', () => clearTimeout(overall));
    req.on('error', reject);
    req.end(body);
  });
}

function toBytes(data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof data === 'string') return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}
