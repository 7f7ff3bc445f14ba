import { TABLE_ENV_VARS, type TableKey } from '#lib/definitions/tables';
import { type BoardAppUrlRule, boardAppUrlProblem, isLoopbackHttpUrl } from '#lib/domain/board-app';
import type { DestinationPolicy } from '#lib/domain/destinations';
import { integerRangeProblem, isFrameAncestorSource, isHttpUrl, parseBaseUrl } from './values';

/** Raised at start-up when the environment is incomplete or invalid; the message lists every problem. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export type Env = Record<string, string | undefined>;

export const DEFAULT_METADATA_MAX_BYTES = 32 * 1024;
/**
 * Room kept free in every carrier of a session's metadata, beyond the largest event computed for it: for
 * what the computation cannot see (a field added to events later, EventBridge's envelope growing).
 */
export const METADATA_SIZE_MARGIN_BYTES = 8 * 1024;
/**
 * The largest METADATA_MAX_BYTES accepted: every event that carries a session's metadata must fit what
 * carries it. An EventBridge entry holds 256 KB, the event as EventBridge represents it; a webhook delivery
 * waits on the SQS queue as a message of at most 256 KiB, where the event's JSON is a string inside JSON,
 * so each quote or backslash of the metadata counts twice. The largest event (every other field at its
 * longest and worst for escaping: about 20 KB) with this much metadata makes a delivery message of about
 * 246 KB and an EventBridge event of about 137 KB, leaving METADATA_SIZE_MARGIN_BYTES free in the queue's
 * 256 KiB (test/unit/lib/adapters/eventbridge/event-sizes.test.ts computes both, and that 1 KiB more would not fit).
 */
export const METADATA_MAX_BYTES_CEILING = 114 * 1024;

/** Why the ceiling is what it is, for the message that refuses a larger METADATA_MAX_BYTES. */
export const METADATA_CEILING_REASON =
  'so that every event carrying a session’s metadata fits an EventBridge entry and a webhook delivery message, 256 KiB each';
/**
 * Largest request body the API reads. It must hold the largest accepted metadata however the client
 * encodes it: escaping every character as `\uXXXX` (Python's json.dumps does so for non-ASCII) takes up
 * to six bytes per byte, plus room for the other fields.
 */
const BODY_ESCAPING_FACTOR = 6;
const BODY_OVERHEAD_BYTES = 16 * 1024;

export interface DynamoConfig {
  /** Only set locally (dynalite) or for tools; Lambda uses the regional endpoint. */
  endpoint: string | undefined;
  region: string;
}

export interface CreateSessionConfig {
  tables: Record<'boards' | 'memberships' | 'sessions' | 'idempotency', string>;
  dynamo: DynamoConfig;
  /** Base URL of embed links (custom domain); otherwise derived from the API Gateway request. */
  publicBaseUrl: string | undefined;
  metadataMaxBytes: number;
  maxBodyBytes: number;
  /** The stage's longest session (MAX_SESSION_LIFETIME_SECONDS); absent: the spec's rule (year 9999). */
  maxSessionLifetimeSeconds?: number;
}

/** The tables a function reads or writes, and how to reach DynamoDB. */
export interface StorageConfig<K extends TableKey> {
  tables: Record<K, string>;
  dynamo: DynamoConfig;
}

export type AuthorizerConfig = StorageConfig<'apiKeys'> & {
  /** The stage's authorizer cache period (AUTHORIZER_CACHE_TTL_SECONDS), which paces last-use writes. */
  authorizerCacheTtlSeconds: number;
  /** The stage's default usage plan (USAGE_PLAN_NAME); unset off AWS, where no key needs registering. */
  usagePlanName: string | undefined;
};

export interface EmbedPageConfig {
  tables: Record<'sessions' | 'boards', string>;
  dynamo: DynamoConfig;
  /** CSP `frame-ancestors` sources: who may put the embed page in a frame. */
  frameAncestors: string;
  /** The service's public base URL (the ID token's issuer); otherwise derived from the API Gateway request. */
  publicBaseUrl: string | undefined;
  /** The stage's default board application (`BOARD_APP_URL`), for boards without an `appUrl` of their own. */
  boardAppUrl: string | undefined;
  /** The rule a board's app URL must meet to be handed a token (loopback http only on the local runtime). */
  appUrlRule: BoardAppUrlRule;
  /** Where the keys that sign ID tokens and derive pairwise subjects are; undefined: no hand-off possible. */
  idTokenKeys: IdTokenKeysConfig | undefined;
}

/**
 * The ID token keys: the keyring in its table, opened in AWS by a KMS key (by ARN), locally by the key
 * file the runtime made (`ID_TOKEN_KEY_FILE`).
 */
export type IdTokenKeysConfig = { table: string; dynamo: DynamoConfig } & (
  | { kind: 'kms'; keyArn: string; region: string }
  | { kind: 'file'; path: string }
);

/** Any https site may frame the page, plus localhost for development. */
export const DEFAULT_FRAME_ANCESTORS = 'https: http://localhost:* http://127.0.0.1:*';

/** The embed page's `frame-ancestors` sources from `EMBED_FRAME_ANCESTORS`, or the default. */
export function readFrameAncestors(env: Env, problems: string[]): string {
  const sources = (env.EMBED_FRAME_ANCESTORS?.trim() || DEFAULT_FRAME_ANCESTORS).split(/\s+/);
  const invalid = sources.filter((source) => !isFrameAncestorSource(source));
  if (invalid.length > 0) {
    problems.push(
      `EMBED_FRAME_ANCESTORS has invalid CSP sources: ${invalid.join(' ')} (use origins like https://app.example.com)`,
    );
  }
  return sources.join(' ');
}

/** Reads and validates the configuration of the embed page; throws `ConfigError`. */
export function readEmbedPageConfig(env: Env): EmbedPageConfig {
  const problems: string[] = [];
  const tables = readTables(env, ['sessions', 'boards'], problems);
  const dynamo = readDynamo(env, problems);
  const frameAncestors = readFrameAncestors(env, problems);
  const publicBaseUrl = readBaseUrl(env, 'PUBLIC_BASE_URL', problems);
  const appUrlRule = appUrlRuleFor(publicBaseUrl);
  const boardAppUrl = readBoardAppUrl(env, appUrlRule, problems);
  const idTokenKeys = readIdTokenKeys(env, dynamo, problems);
  fail(problems);
  return { tables, dynamo, frameAncestors, publicBaseUrl, boardAppUrl, appUrlRule, idTokenKeys };
}

const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/;

/** True for the ARN of a KMS key (not an alias: the key id is the token's `kid`). */
export function isKmsKeyArn(value: string): boolean {
  return KMS_KEY_ARN.test(value);
}

/**
 * The ID token keyring: its table (SIGNING_KEYS_TABLE), and the KMS key that opens it by ARN
 * (ID_TOKEN_KEYRING_KEY), or locally the key file that stands in for it (ID_TOKEN_KEY_FILE). Undefined
 * when neither key is set (no hand-off possible).
 */
export function readIdTokenKeys(
  env: Env,
  dynamo: DynamoConfig,
  problems: string[],
): IdTokenKeysConfig | undefined {
  const keyArn = env.ID_TOKEN_KEYRING_KEY?.trim();
  const path = env.ID_TOKEN_KEY_FILE?.trim();
  if (!keyArn && !path) return undefined;
  const { signingKeys: table } = readTables(env, ['signingKeys'], problems);
  if (keyArn) {
    if (!isKmsKeyArn(keyArn)) problems.push(`ID_TOKEN_KEYRING_KEY must be a KMS key ARN, got "${keyArn}"`);
    return { kind: 'kms', keyArn, region: dynamo.region, table, dynamo };
  }
  return { kind: 'file', path: path ?? '', table, dynamo };
}

/**
 * Loopback http app URLs are for the local runtime only, which is where the service itself runs on
 * loopback http; anywhere else (https, or a base URL derived from API Gateway) the app must use https.
 */
export function appUrlRuleFor(publicBaseUrl: string | undefined): BoardAppUrlRule {
  return { allowLoopbackHttp: publicBaseUrl !== undefined && isLoopbackHttpUrl(publicBaseUrl) };
}

/** The stage's default board application from `BOARD_APP_URL`, or undefined when unset or blank. */
export function readBoardAppUrl(env: Env, rule: BoardAppUrlRule, problems: string[]): string | undefined {
  const value = env.BOARD_APP_URL?.trim();
  if (!value) return undefined;
  const problem = boardAppUrlProblem(value, rule);
  if (problem !== undefined) problems.push(`BOARD_APP_URL: ${problem}`);
  return value;
}

/** Reads and validates the configuration of the create-session function; throws `ConfigError`. */
export function readCreateSessionConfig(env: Env): CreateSessionConfig {
  const problems: string[] = [];
  const tables = readTables(env, ['boards', 'memberships', 'sessions', 'idempotency'], problems);
  const metadataMaxBytes = readMetadataMaxBytes(env, problems);
  const publicBaseUrl = readBaseUrl(env, 'PUBLIC_BASE_URL', problems);
  const maxLifetime = env.MAX_SESSION_LIFETIME_SECONDS?.trim()
    ? readInteger(env, 'MAX_SESSION_LIFETIME_SECONDS', 0, 1, Number.MAX_SAFE_INTEGER, problems)
    : undefined;
  const dynamo = readDynamo(env, problems);
  fail(problems);
  return {
    tables,
    dynamo,
    publicBaseUrl,
    metadataMaxBytes,
    maxBodyBytes: metadataMaxBytes * BODY_ESCAPING_FACTOR + BODY_OVERHEAD_BYTES,
    ...(maxLifetime !== undefined ? { maxSessionLifetimeSeconds: maxLifetime } : {}),
  };
}

/** METADATA_MAX_BYTES: 1 to METADATA_MAX_BYTES_CEILING, saying why when it is above. */
export function readMetadataMaxBytes(env: Env, problems: string[]): number {
  const found: string[] = [];
  const value = readInteger(
    env,
    'METADATA_MAX_BYTES',
    DEFAULT_METADATA_MAX_BYTES,
    1,
    METADATA_MAX_BYTES_CEILING,
    found,
  );
  problems.push(...found.map((problem) => `${problem} (${METADATA_CEILING_REASON})`));
  return value;
}

/** Reads and validates the table names and DynamoDB settings of a function; throws `ConfigError`. */
export function readStorageConfig<K extends TableKey>(env: Env, keys: readonly K[]): StorageConfig<K> {
  const problems: string[] = [];
  const tables = readTables(env, keys, problems);
  const dynamo = readDynamo(env, problems);
  fail(problems);
  return { tables, dynamo };
}

/** Reads and validates the configuration of the authorizer; throws `ConfigError`. */
export function readAuthorizerConfig(env: Env): AuthorizerConfig {
  const problems: string[] = [];
  const authorizerCacheTtlSeconds = readInteger(
    env,
    'AUTHORIZER_CACHE_TTL_SECONDS',
    DEFAULT_AUTHORIZER_CACHE_TTL_SECONDS,
    0,
    3_600,
    problems,
  );
  fail(problems);
  return {
    ...readStorageConfig(env, ['apiKeys']),
    authorizerCacheTtlSeconds,
    usagePlanName: env.USAGE_PLAN_NAME?.trim() || undefined,
  };
}

/** The provisioning function's tables, and the stage's default usage plan by name (unset off AWS). */
export function readProvisioningConfig(env: Env): StorageConfig<
  'boards' | 'memberships' | 'apiKeys' | 'sessions'
> & {
  usagePlanName: string | undefined;
} {
  return {
    ...readStorageConfig(env, ['boards', 'memberships', 'apiKeys', 'sessions']),
    usagePlanName: env.USAGE_PLAN_NAME?.trim() || undefined,
  };
}

/** API Gateway's authorizer cache period when the stage does not set one (its `authorizerCacheTtlSeconds`). */
export const DEFAULT_AUTHORIZER_CACHE_TTL_SECONDS = 300;

/** Table names for the given tables from their environment variables. */
export function readTables<K extends TableKey>(
  env: Env,
  keys: readonly K[],
  problems: string[],
): Record<K, string> {
  const names = {} as Record<K, string>;
  for (const key of keys) {
    const value = env[TABLE_ENV_VARS[key]]?.trim();
    if (!value) problems.push(`${TABLE_ENV_VARS[key]} is required (name of the ${key} table)`);
    names[key] = value ?? '';
  }
  return names;
}

/** DYNAMODB_ENDPOINT: a DynamoDB other than AWS's regional one (the local runtime's, say), if any. */
export function readDynamoEndpoint(env: Env, problems: string[]): string | undefined {
  const endpoint = env.DYNAMODB_ENDPOINT?.trim() || undefined;
  if (endpoint && !isHttpUrl(endpoint))
    problems.push(`DYNAMODB_ENDPOINT must be an http(s) URL, got "${endpoint}"`);
  return endpoint;
}

/**
 * The DynamoDB endpoint and region. A region is needed only to reach AWS: with DYNAMODB_ENDPOINT it
 * defaults to `local`.
 */
export function readDynamo(env: Env, problems: string[]): DynamoConfig {
  const endpoint = readDynamoEndpoint(env, problems);
  const region = env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim() || (endpoint ? 'local' : '');
  if (!region)
    problems.push(
      'AWS_REGION is required to reach DynamoDB on AWS (set it to your region, or set DYNAMODB_ENDPOINT for a local DynamoDB)',
    );
  return { endpoint, region };
}

/** An optional absolute http(s) URL without a trailing slash, query, fragment or credentials. */
export function readBaseUrl(env: Env, name: string, problems: string[]): string | undefined {
  const value = env[name]?.trim();
  return value ? parseBaseUrl(name, value, problems) : undefined;
}

/** An optional integer within bounds, in decimal digits. */
export function readInteger(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max: number,
  problems: string[],
): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  const problem = integerRangeProblem(name, value, min, max, raw);
  if (problem === undefined) return value;
  problems.push(problem);
  return fallback;
}

/** Throws one `ConfigError` listing every problem found. */
export function fail(problems: string[]): void {
  if (problems.length > 0) throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
}

/** The discovery function's configuration: the issuer, and the keyring whose public halves it publishes. */
export interface DiscoveryConfig {
  publicBaseUrl: string | undefined;
  keys: PublishedKeysConfig | undefined;
}

/** The keyring the JWKS lists: its table, read without any KMS key (public halves only). */
export interface PublishedKeysConfig {
  table: string;
  dynamo: DynamoConfig;
}

/** Reads and validates the configuration of the discovery function; throws `ConfigError`. */
export function readDiscoveryConfig(env: Env): DiscoveryConfig {
  const problems: string[] = [];
  const publicBaseUrl = readBaseUrl(env, 'PUBLIC_BASE_URL', problems);
  const table = env[TABLE_ENV_VARS.signingKeys]?.trim();
  const keys = table ? { table, dynamo: readDynamo(env, problems) } : undefined;
  fail(problems);
  return { publicBaseUrl, keys };
}

/** Where webhook signing secrets come from: a KMS HMAC key by ARN (AWS), or the local master key file. */
export type WebhookSecretsConfig =
  | { kind: 'kms'; keyArn: string; region: string }
  | { kind: 'file'; path: string };

/** WEBHOOK_SECRET_KEY (a KMS key ARN) or WEBHOOK_MASTER_KEY_FILE (local runtime); undefined when neither. */
export function readWebhookSecrets(env: Env, problems: string[]): WebhookSecretsConfig | undefined {
  const keyArn = env.WEBHOOK_SECRET_KEY?.trim();
  if (keyArn) {
    if (!isKmsKeyArn(keyArn)) problems.push(`WEBHOOK_SECRET_KEY must be a KMS key ARN, got "${keyArn}"`);
    const region = env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim() || '';
    if (!region) problems.push('AWS_REGION is required with WEBHOOK_SECRET_KEY');
    return { kind: 'kms', keyArn, region };
  }
  const path = env.WEBHOOK_MASTER_KEY_FILE?.trim();
  return path ? { kind: 'file', path } : undefined;
}

/** The configuration of creating a webhook endpoint: its tables, the secrets, and where endpoints may point. */
export interface CreateWebhookConfig {
  tables: Record<'webhooks' | 'idempotency', string>;
  dynamo: DynamoConfig;
  secrets: WebhookSecretsConfig | undefined;
  /** Public internet hosts only; loopback too on a local runtime started with WEBHOOK_ALLOW_LOOPBACK=1. */
  destinations: DestinationPolicy;
}

/** Reads and validates the configuration of the create-webhook function; throws `ConfigError`. */
export function readCreateWebhookConfig(env: Env): CreateWebhookConfig {
  const problems: string[] = [];
  const tables = readTables(env, ['webhooks', 'idempotency'], problems);
  const dynamo = readDynamo(env, problems);
  const secrets = readWebhookSecrets(env, problems);
  const destinations = readDestinationPolicy(env, problems);
  fail(problems);
  return { tables, dynamo, secrets, destinations };
}

/** The variable by which the local runtime's operator allows loopback receivers. */
export const ALLOW_LOOPBACK_VARIABLE = 'WEBHOOK_ALLOW_LOOPBACK';

/** What a refusal of a loopback receiver tells the local runtime's operator. */
export const ALLOW_LOOPBACK_HINT = `${ALLOW_LOOPBACK_VARIABLE}=1 allows a receiver on this machine, on the local runtime only`;

/**
 * Where webhooks and back-channel logouts may be sent: public internet hosts only, unless the operator of
 * a local runtime (a DynamoDB endpoint of its own, never AWS) allows loopback receivers with
 * WEBHOOK_ALLOW_LOOPBACK=1. The variable anywhere else, or any other value, is a configuration error:
 * the default stays safe.
 */
export function readDestinationPolicy(env: Env, problems: string[]): DestinationPolicy {
  const raw = env[ALLOW_LOOPBACK_VARIABLE]?.trim() ?? '';
  const local = Boolean(env.DYNAMODB_ENDPOINT?.trim());
  if (raw !== '' && raw !== '0' && raw !== '1') {
    problems.push(`${ALLOW_LOOPBACK_VARIABLE} must be 1 (allow loopback receivers) or 0, got "${raw}"`);
  } else if (raw === '1' && !local) {
    problems.push(
      `${ALLOW_LOOPBACK_VARIABLE} is for the local runtime only (with DYNAMODB_ENDPOINT); on AWS, loopback receivers are always refused`,
    );
  }
  const allowLoopback = raw === '1' && local;
  return local && !allowLoopback ? { allowLoopback, loopbackHint: ALLOW_LOOPBACK_HINT } : { allowLoopback };
}

/** The local runtime's default retry schedule of webhook deliveries, in seconds after each failure. */
export const DEFAULT_LOCAL_WEBHOOK_RETRY_SECONDS: readonly number[] = [1, 2, 4];
const MAX_RETRY_STEPS = 20;
const MAX_RETRY_SECONDS = 86_400;

/**
 * WEBHOOK_RETRY_SECONDS: the local runtime's retry schedule, comma-separated whole seconds (`1,2,4`: a
 * retry 1 s after the first failure, 2 s after the second, 4 s after the third, then none). `0` or an
 * empty list means no retry.
 */
export function readWebhookRetrySeconds(env: Env, problems: string[]): readonly number[] {
  const raw = env.WEBHOOK_RETRY_SECONDS?.trim();
  if (raw === undefined || raw === '') return DEFAULT_LOCAL_WEBHOOK_RETRY_SECONDS;
  if (raw === '0') return [];
  const parts = raw.split(',').map((part) => part.trim());
  const valid =
    parts.length <= MAX_RETRY_STEPS &&
    parts.every((part) => /^\d{1,6}$/.test(part) && Number(part) >= 1 && Number(part) <= MAX_RETRY_SECONDS);
  if (!valid) {
    problems.push(
      `WEBHOOK_RETRY_SECONDS must be up to ${MAX_RETRY_STEPS} comma-separated whole seconds from 1 to ${MAX_RETRY_SECONDS} (such as 1,2,4), or 0 for no retry; got "${raw}"`,
    );
    return DEFAULT_LOCAL_WEBHOOK_RETRY_SECONDS;
  }
  return parts.map(Number);
}

/** Where the event pipeline on AWS sends: the stack's bus and the webhook delivery queue. */
export interface EventPipelineConfig<K extends TableKey> extends StorageConfig<K> {
  /** EVENT_BUS_NAME: the bus every event is put on; absent for a function that puts none. */
  eventBusName?: string;
  /** WEBHOOK_DELIVERY_QUEUE_URL: the queue where deliveries (and back-channel logouts) wait. */
  deliveryQueueUrl: string;
  /** Where webhook signing secrets come from: read only by the function that signs deliveries. */
  secrets: WebhookSecretsConfig | undefined;
  /** Back-channel logout: which boards have an application, as the embed page decides it. */
  logout: LogoutConfig;
}

/** What back-channel logout reads: as the embed page, the stage's default application and the URL rule. */
export interface LogoutConfig {
  /** BOARD_APP_URL: the stage's default board application. */
  boardAppUrl: string | undefined;
  appUrlRule: BoardAppUrlRule;
  /**
   * PUBLIC_BASE_URL: the logout tokens' issuer, the ID token's. Required where logouts are signed (no
   * request to derive it from: the stack passes the API's stage URL when no custom domain is set).
   */
  issuer: string | undefined;
  /** The keys that sign logout tokens and derive their `sub`: read and required where logouts are signed. */
  idTokenKeys: IdTokenKeysConfig | undefined;
}

/**
 * Reads and validates the configuration of a background function of the event pipeline (the stream
 * consumer, the expiry sweep, webhook delivery); throws `ConfigError`. `signs`: the function signs what it
 * delivers (webhooks with their secrets, back-channel logout tokens with the ID token keys), so it reads
 * those keys, and the issuer and the ID token keys must be set; the others read neither.
 */
export function readEventPipelineConfig<K extends TableKey>(
  env: Env,
  keys: readonly K[],
  needs: { eventBus: boolean; signs?: boolean },
): EventPipelineConfig<K> {
  const problems: string[] = [];
  const tables = readTables(env, keys, problems);
  const dynamo = readDynamo(env, problems);
  const eventBusName = env.EVENT_BUS_NAME?.trim() || undefined;
  if (needs.eventBus && !eventBusName) problems.push("EVENT_BUS_NAME is required (the stack's event bus)");
  const deliveryQueueUrl = env.WEBHOOK_DELIVERY_QUEUE_URL?.trim() ?? '';
  if (!isHttpUrl(deliveryQueueUrl))
    problems.push(`WEBHOOK_DELIVERY_QUEUE_URL must be the delivery queue's URL, got "${deliveryQueueUrl}"`);
  if (!env.AWS_REGION?.trim() && !env.AWS_DEFAULT_REGION?.trim()) problems.push('AWS_REGION is required');
  const secrets = needs.signs ? readWebhookSecrets(env, problems) : undefined;
  const issuer = readBaseUrl(env, 'PUBLIC_BASE_URL', problems);
  const appUrlRule = appUrlRuleFor(issuer);
  const boardAppUrl = readBoardAppUrl(env, appUrlRule, problems);
  const idTokenKeys = needs.signs ? readIdTokenKeys(env, dynamo, problems) : undefined;
  if (needs.signs) {
    if (!issuer) problems.push('PUBLIC_BASE_URL is required (the issuer of back-channel logout tokens)');
    if (!idTokenKeys) problems.push('ID_TOKEN_KEYRING_KEY is required (its keyring signs logout tokens)');
  }
  fail(problems);
  return {
    tables,
    dynamo,
    eventBusName,
    deliveryQueueUrl,
    secrets,
    logout: { boardAppUrl, appUrlRule, issuer, idTokenKeys },
  };
}

/** Reads and validates the configuration of the key rotation: the keyring and its KMS key are required. */
export function readKeyRotationConfig(env: Env): IdTokenKeysConfig {
  const problems: string[] = [];
  const dynamo = readDynamo(env, problems);
  const keys = readIdTokenKeys(env, dynamo, problems);
  if (!keys) problems.push('ID_TOKEN_KEYRING_KEY is required (the KMS key that encrypts the keyring)');
  fail(problems);
  return keys as IdTokenKeysConfig;
}
