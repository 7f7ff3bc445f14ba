/**
 * The local stand-in for API Gateway's AWS_IAM authorization: a request to an `auth: 'iam'` route must be
 * signed with Signature Version 4 (service `execute-api`, the API's region) by one of the credentials the
 * runtime was given, as the AWS SDKs sign. The signature is verified by signing the request again with
 * the standard SDK signer and the same signed headers and date; an unsigned request is refused as API
 * Gateway refuses it, a signature that does not verify or a date more than 15 minutes off with 403.
 */
import { createHash, createHmac, type Hash, type Hmac, timingSafeEqual } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import type { GatewayResponseType } from '#lib/adapters/http/gateway-responses';

/** SHA-256, or HMAC-SHA-256 with a secret, in the shape the SigV4 signer asks for. */
export class Sha256 {
  readonly #hash: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytesOf(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(bytesOf(data));
  }
  async digest(): Promise<Uint8Array> {
    return this.#hash.digest();
  }
}

function bytesOf(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

/** A credential the local gateway accepts, and the principal it stands for. */
export interface LocalIamCredential {
  accessKeyId: string;
  secretAccessKey: string;
  /** What API Gateway reports as `requestContext.identity.userArn` for this caller. */
  userArn: string;
  /**
   * Whether the principal's IAM policies allow `execute-api:Invoke` on a method ARN; every method when
   * absent (the local runtime's credential stands for a principal allowed the provisioning API).
   */
  allows?: (methodArn: string) => boolean;
}

/** The caller as API Gateway puts it in `requestContext.identity`. */
export interface IamCaller {
  userArn: string;
  accessKey: string;
  caller: string;
  accountId: string;
}

/** What the signature covers: the request as the client sent it, its path including any stage prefix. */
export interface SignedRequest {
  method: string;
  /** The path as sent (`/prod/admin/…` on an execute-api domain), undecoded. */
  path: string;
  query: URLSearchParams;
  /** Header names lower-cased, each with its single value. */
  headers: Record<string, string>;
  body: Buffer;
}

/** How far a signature's date may be from now, as AWS allows. */
const MAX_SKEW_MS = 15 * 60 * 1000;
const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/\s,]+)\/(\d{8})\/([^/\s,]+)\/([^/\s,]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;

/**
 * The caller of a signed request, or the gateway response API Gateway would give: MISSING_AUTHENTICATION_TOKEN
 * when it carries no signature, INVALID_SIGNATURE when it does not verify (or names an unknown key, another
 * region or service), EXPIRED_TOKEN when its date is too far from `now`.
 */
export async function verifySignature(
  request: SignedRequest,
  options: { region: string; accountId: string; credentials: readonly LocalIamCredential[]; now: Date },
): Promise<{ caller: IamCaller; credential: LocalIamCredential } | GatewayResponseType> {
  const authorization = request.headers.authorization;
  if (!authorization?.startsWith('AWS4-')) return 'MISSING_AUTHENTICATION_TOKEN';
  const parts = AUTHORIZATION.exec(authorization.trim());
  if (!parts) return 'INVALID_SIGNATURE';
  const [, accessKeyId, day, region, service, signedHeaderList, signature] = parts as unknown as string[];
  const credential = options.credentials.find((candidate) => candidate.accessKeyId === accessKeyId);
  if (!credential || region !== options.region || service !== 'execute-api') return 'INVALID_SIGNATURE';
  const amzDate = request.headers['x-amz-date'] ?? '';
  const signedAt = parseAmzDate(amzDate);
  if (!signedAt || !amzDate.startsWith(day as string)) return 'INVALID_SIGNATURE';
  if (Math.abs(signedAt.getTime() - options.now.getTime()) > MAX_SKEW_MS) return 'EXPIRED_TOKEN';

  const signedHeaders = (signedHeaderList as string).split(';');
  if (!signedHeaders.includes('host')) return 'INVALID_SIGNATURE';
  // A payload hash the client sent must be the body's: the signature covers the hash, not the body.
  const payloadHash = request.headers['x-amz-content-sha256'];
  if (payloadHash !== undefined && payloadHash !== createHash('sha256').update(request.body).digest('hex'))
    return 'INVALID_SIGNATURE';
  const headers: Record<string, string> = {};
  for (const name of signedHeaders) {
    const value = request.headers[name];
    if (value === undefined) return 'INVALID_SIGNATURE';
    headers[name] = value;
  }
  const signer = new SignatureV4({
    service: 'execute-api',
    region: options.region,
    sha256: Sha256,
    credentials: { accessKeyId: credential.accessKeyId, secretAccessKey: credential.secretAccessKey },
    // The path as sent, encoded once by the client, is encoded again in the canonical request, as the
    // SDK signers and API Gateway do for every service but S3.
    applyChecksum: false,
  });
  const query: Record<string, string | string[]> = {};
  for (const key of new Set(request.query.keys())) {
    const values = request.query.getAll(key);
    query[key] = values.length === 1 ? (values[0] as string) : values;
  }
  const expected = await signer.sign(
    {
      method: request.method,
      protocol: 'https:',
      hostname: headers.host as string,
      path: request.path,
      query,
      headers,
      body: request.body,
    },
    { signingDate: signedAt, signableHeaders: new Set(signedHeaders) },
  );
  const expectedSignature = /Signature=([0-9a-f]{64})/.exec(String(expected.headers.authorization))?.[1];
  if (!expectedSignature || !sameHex(expectedSignature, signature as string)) return 'INVALID_SIGNATURE';
  return {
    credential,
    caller: {
      userArn: credential.userArn,
      accessKey: credential.accessKeyId,
      caller: credential.userArn.slice(credential.userArn.lastIndexOf('/') + 1),
      accountId: options.accountId,
    },
  };
}

/** `20260101T120000Z` as a date; undefined for anything else. */
function parseAmzDate(value: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[];
  const date = new Date(Date.UTC(y as number, (mo as number) - 1, d, h, mi, s));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function sameHex(a: string, b: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(a), digest(b));
}
