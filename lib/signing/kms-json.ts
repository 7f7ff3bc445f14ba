/**
 * The three KMS operations the service sends (`Sign`, `GenerateMac`, `GetPublicKey`), called through KMS's
 * JSON API (`TrentService`, `application/x-amz-json-1.1`) with lib/aws/json-protocol.ts, signed with the
 * SigV4 signer every Lambda bundle already holds for DynamoDB. `@aws-sdk/client-kms` would add its module
 * of every operation's schema (about 50 KiB) to the embed page's bundle; this is what the service needs of it.
 */
import {
  type AwsJsonCall,
  type AwsJsonLimits,
  type AwsJsonService,
  awsJsonCall,
  isTransientAwsJsonError,
} from '#lib/aws/json-protocol';
import { DependencyUnavailableError } from '#lib/domain/errors';

/**
 * Limits of every KMS call: a signature takes KMS milliseconds, so an attempt that hangs is abandoned and
 * tried again (3 attempts in all, as the SDK's standard retries), and the embed page answers 500 well
 * inside its budget.
 */
export const KMS_LIMITS: AwsJsonLimits = {
  connectionTimeoutMs: 500,
  requestTimeoutMs: 1_500,
  maxAttempts: 3,
};

type Credentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string };

export interface KmsJsonOptions {
  region: string;
  /** Another endpoint than `https://kms.{region}.amazonaws.com` (moto_server in tests). */
  endpoint?: string;
  /** The SDK's default provider unless given (in the Lambda bundles, the environment's credentials). */
  credentials?: Credentials | (() => Promise<Credentials>);
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

/** KMS's JSON API; what it refuses is an `AwsJsonError` named `KmsError`. */
const KMS: AwsJsonService = {
  signingName: 'kms',
  targetPrefix: 'TrentService',
  jsonVersion: '1.1',
  limits: KMS_LIMITS,
  errorName: 'KmsError',
};

/** A KMS client of three operations over its JSON API. */
export class KmsJsonClient implements KmsApi {
  readonly #send: AwsJsonCall;

  constructor(options: KmsJsonOptions) {
    const send = awsJsonCall(KMS, options);
    // KMS unreachable, failing or throttled once its attempts ran out is an outage the caller may retry
    // (503), never a bug of ours; a refusal (a wrong key, say) stays an error.
    this.#send = async (operation, input) => {
      try {
        return await send(operation, input);
      } catch (error) {
        if (isTransientAwsJsonError(error)) throw new DependencyUnavailableError({ cause: error });
        throw error;
      }
    };
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
}

function base64(value: Uint8Array | string): string {
  return Buffer.from(value).toString('base64');
}

function bytes(value: unknown): Uint8Array | undefined {
  return typeof value === 'string' ? Buffer.from(value, 'base64') : undefined;
}
