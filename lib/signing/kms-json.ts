/**
 * The three KMS operations the service sends (`Sign`, `GenerateMac`, `GetPublicKey`), called through KMS's
 * JSON API (`TrentService`, `application/x-amz-json-1.1`) and signed with the SigV4 signer every Lambda
 * bundle already holds for DynamoDB. `@aws-sdk/client-kms` would add its module of every operation's
 * schema (about 50 KiB) to the embed page's bundle; this is what the service needs of it.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * Limits of every KMS call: a signature takes KMS milliseconds, so an attempt that hangs is abandoned and
 * tried again (3 attempts in all, as the SDK's standard retries), and the embed page answers 500 well
 * inside its budget.
 */
export const KMS_LIMITS = { connectionTimeoutMs: 500, requestTimeoutMs: 1_500, maxAttempts: 3 } as const;

type Credentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string };

export interface KmsJsonOptions {
  region: string;
  /** Another endpoint than `https://kms.{region}.amazonaws.com` (moto_server in tests). */
  endpoint?: string;
  /** The SDK's default provider unless given (in the Lambda bundles, the environment's credentials). */
  credentials?: Credentials | (() => Promise<Credentials>);
}

/** An error KMS answered (`__type`, `message`), or a transport failure once the attempts ran out. */
export class KmsError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status?: number,
  ) {
    super(`KMS ${code}: ${message}`);
    this.name = 'KmsError';
  }
}

/** What the adapters send to KMS: the three operations, blobs as bytes. */
export interface KmsApi {
  sign(input: {
    KeyId: string;
    SigningAlgorithm: 'ECDSA_SHA_256';
    MessageType: 'RAW' | 'DIGEST';
    Message: Uint8Array;
  }): Promise<{ Signature?: Uint8Array }>;
  generateMac(input: {
    KeyId: string;
    MacAlgorithm: 'HMAC_SHA_256';
    Message: Uint8Array | string;
  }): Promise<{ Mac?: Uint8Array }>;
  getPublicKey(input: { KeyId: string }): Promise<{ PublicKey?: Uint8Array }>;
}

/** SHA-256 (or HMAC-SHA-256 with a secret) as the SigV4 signer asks for it. */
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

/** KMS errors worth another attempt: throttling and KMS's own failures. */
const RETRIED_CODES = new Set([
  'ThrottlingException',
  'KMSInternalException',
  'DependencyTimeoutException',
  'ServiceUnavailableException',
  'InternalFailure',
]);

/** A KMS client of three operations over its JSON API. */
export class KmsJsonClient implements KmsApi {
  readonly #url: URL;
  readonly #signer: SignatureV4;
  readonly #region: string;

  constructor(options: KmsJsonOptions) {
    this.#region = options.region;
    this.#url = new URL(options.endpoint ?? `https://kms.${options.region}.amazonaws.com/`);
    const given = options.credentials;
    this.#signer = new SignatureV4({
      service: 'kms',
      region: options.region,
      sha256: Sha256,
      credentials: typeof given === 'function' ? given : given ? async () => given : defaultProvider(),
      applyChecksum: false,
    });
  }

  async sign(input: Parameters<KmsApi['sign']>[0]) {
    const out = await this.#send('Sign', { ...input, Message: base64(input.Message) });
    return { Signature: bytes(out.Signature) };
  }

  async generateMac(input: Parameters<KmsApi['generateMac']>[0]) {
    const out = await this.#send('GenerateMac', { ...input, Message: base64(input.Message) });
    return { Mac: bytes(out.Mac) };
  }

  async getPublicKey(input: { KeyId: string }) {
    const out = await this.#send('GetPublicKey', input);
    return { PublicKey: bytes(out.PublicKey) };
  }

  /** Nothing to release: every call opens and closes its own connection's use. */
  destroy(): void {}

  async #send(operation: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
    const body = JSON.stringify(input);
    let failure: unknown;
    for (let attempt = 1; attempt <= KMS_LIMITS.maxAttempts; attempt++) {
      try {
        return await this.#attempt(operation, body);
      } catch (error) {
        failure = error;
        const retried =
          !(error instanceof KmsError) || RETRIED_CODES.has(error.code) || (error.status ?? 0) >= 500;
        if (!retried || attempt === KMS_LIMITS.maxAttempts) break;
        // Jittered backoff as the SDK's standard retries: up to 100 ms, then 200 ms.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 100 * 2 ** (attempt - 1)));
      }
    }
    throw failure;
  }

  async #attempt(operation: string, body: string): Promise<Record<string, unknown>> {
    const url = this.#url;
    const signed = await this.#signer.sign({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query: {},
      headers: {
        host: url.host,
        'content-type': 'application/x-amz-json-1.1',
        'x-amz-target': `TrentService.${operation}`,
        'content-length': String(Buffer.byteLength(body)),
      },
      body,
    });
    const { status, text } = await post(url, signed.headers, body);
    const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    if (status >= 200 && status < 300) return parsed;
    const type = String(parsed.__type ?? parsed.code ?? `HTTP ${status}`);
    const code = type.slice(type.lastIndexOf('#') + 1);
    throw new KmsError(code, String(parsed.message ?? parsed.Message ?? `in ${this.#region}`), status);
  }
}

/** One POST with the connection and request timeouts of KMS_LIMITS. */
function post(
  url: URL,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    const req = send(url, { method: 'POST', headers, timeout: KMS_LIMITS.connectionTimeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    const overall = setTimeout(
      () => req.destroy(new Error(`KMS answered nothing within ${KMS_LIMITS.requestTimeoutMs} ms`)),
      KMS_LIMITS.requestTimeoutMs,
    );
    req.on('close', () => clearTimeout(overall));
    req.on('socket', (socket) => {
      // Until connected, `timeout` is the connection timeout; then the overall timer alone applies.
      socket.once('connect', () => req.setTimeout(0));
    });
    req.on('timeout', () =>
      req.destroy(new Error(`KMS connection not made within ${KMS_LIMITS.connectionTimeoutMs} ms`)),
    );
    req.on('error', reject);
    req.end(body);
  });
}

function toBytes(data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof data === 'string') return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

function base64(value: Uint8Array | string): string {
  return Buffer.from(value).toString('base64');
}

function bytes(value: unknown): Uint8Array | undefined {
  return typeof value === 'string' ? Buffer.from(value, 'base64') : undefined;
}
