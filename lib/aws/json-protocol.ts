/**
 * A call of an AWS JSON protocol API (EventBridge `AWSEvents`, SQS `AmazonSQS`, KMS `TrentService`), signed
 * with the SigV4 signer and credential provider every Lambda bundle already holds for DynamoDB: the few
 * operations the service sends (`PutEvents`, `SendMessage`, KMS's `Sign` and two more) do not need an SDK
 * client each. lib/signing/kms-json.ts is the KMS client built on it.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';

type Credentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string };

/** How long an attempt may take and how many there are: an attempt that hangs is abandoned and tried again. */
export interface AwsJsonLimits {
  requestTimeoutMs: number;
  maxAttempts: number;
  /** How long the connection may take to open, when shorter than the whole attempt. */
  connectionTimeoutMs?: number;
}

/** Limits of every EventBridge and SQS call: 3 attempts in all. */
export const AWS_JSON_LIMITS: AwsJsonLimits = { requestTimeoutMs: 3_000, maxAttempts: 3 };

/** One JSON protocol service: its SigV4 name, its target prefix and JSON version, the limits of its calls. */
export interface AwsJsonService {
  /** The signing name and the endpoint's first label: `events`, `sqs`, `kms`. */
  signingName: string;
  /** `X-Amz-Target` prefix: `AWSEvents`, `AmazonSQS`, `TrentService`. */
  targetPrefix: string;
  /** `1.1` (EventBridge, KMS) or `1.0` (SQS). */
  jsonVersion: '1.0' | '1.1';
  limits: AwsJsonLimits;
  /** The `name` of its errors: `AwsJsonError` unless given. */
  errorName?: string;
}

export const EVENTBRIDGE: AwsJsonService = {
  signingName: 'events',
  targetPrefix: 'AWSEvents',
  jsonVersion: '1.1',
  limits: AWS_JSON_LIMITS,
};
export const SQS: AwsJsonService = {
  signingName: 'sqs',
  targetPrefix: 'AmazonSQS',
  jsonVersion: '1.0',
  limits: AWS_JSON_LIMITS,
};

export interface AwsJsonOptions {
  region: string;
  /** Another endpoint than `https://{signingName}.{region}.amazonaws.com/` (a fake in tests). */
  endpoint?: string;
  /** The SDK's default provider unless given (in the Lambda bundles, the environment's credentials). */
  credentials?: Credentials | (() => Promise<Credentials>);
}

/** An error the service answered (`__type`, `message`), or a transport failure once attempts ran out. */
export class AwsJsonError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status?: number,
    name = 'AwsJsonError',
  ) {
    super(`${code}: ${message}`);
    this.name = name;
  }
}

/** Sends one operation of a JSON protocol service; answers its parsed output. */
export type AwsJsonCall = (
  operation: string,
  input: Record<string, unknown>,
) => Promise<Record<string, unknown>>;

/** SHA-256 (or HMAC-SHA-256 with a secret) as the SigV4 signer asks for it. */
export class Sha256 {
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

/** What the services answer when another attempt may succeed: throttling and their own failures. */
const RETRIED_CODES = new Set([
  'ThrottlingException',
  'InternalFailure',
  'ServiceUnavailable',
  'RequestThrottled',
  // KMS's own.
  'KMSInternalException',
  'DependencyTimeoutException',
  'ServiceUnavailableException',
]);

/** A signed caller of one service in one region. */
export function awsJsonCall(service: AwsJsonService, options: AwsJsonOptions): AwsJsonCall {
  const url = new URL(options.endpoint ?? `https://${service.signingName}.${options.region}.amazonaws.com/`);
  const given = options.credentials;
  const { limits } = service;
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
    const { status, text } = await post(url, signed.headers, body, limits);
    const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    if (status >= 200 && status < 300) return parsed;
    const type = String(parsed.__type ?? parsed.code ?? `HTTP ${status}`);
    throw new AwsJsonError(
      type.slice(type.lastIndexOf('#') + 1),
      String(parsed.message ?? parsed.Message ?? ''),
      status,
      service.errorName,
    );
  };

  return async (operation, input) => {
    const body = JSON.stringify(input);
    let failure: unknown;
    for (let round = 1; round <= limits.maxAttempts; round++) {
      try {
        return await attempt(operation, body);
      } catch (error) {
        failure = error;
        if (!isTransientAwsJsonError(error) || round === limits.maxAttempts) break;
        // Jittered backoff as the SDK's standard retries: up to 100 ms, then 200 ms.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 100 * 2 ** (round - 1)));
      }
    }
    throw failure;
  };
}

/**
 * A failure worth another attempt, and, once attempts ran out, an outage rather than a refusal: the
 * connection failed or timed out, the service failed (5xx) or throttled.
 */
export function isTransientAwsJsonError(error: unknown): boolean {
  return !(error instanceof AwsJsonError) || RETRIED_CODES.has(error.code) || (error.status ?? 0) >= 500;
}

/** One POST within the limits' request timeout (and connection timeout, if any). */
function post(
  url: URL,
  headers: Record<string, string>,
  body: string,
  limits: AwsJsonLimits,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    const connect = limits.connectionTimeoutMs;
    const req = send(url, { method: 'POST', headers, timeout: connect }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    const overall = setTimeout(
      () => req.destroy(new Error(`${url.host} answered nothing within ${limits.requestTimeoutMs} ms`)),
      limits.requestTimeoutMs,
    );
    req.on('close', () => clearTimeout(overall));
    if (connect !== undefined) {
      req.on('socket', (socket) => {
        // Until connected, `timeout` is the connection timeout; then the overall timer alone applies.
        socket.once('connect', () => req.setTimeout(0));
      });
      req.on('timeout', () => req.destroy(new Error(`${url.host}: no connection within ${connect} ms`)));
    }
    req.on('error', reject);
    req.end(body);
  });
}

function toBytes(data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof data === 'string') return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}
