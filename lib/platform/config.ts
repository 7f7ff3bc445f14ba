import { DEFAULT_API_KEY_LIMITS } from '#lib/definitions/rate-limits';
import { TABLES, type TableKey } from '#lib/definitions/tables';
import { RATE_LIMIT_BOUNDS, type RateLimit } from '#lib/domain/api-key';
import { integerRangeProblem, isFrameAncestorSource, isHttpUrl, parseBaseUrl } from './values';

/** Raised at start-up when the environment is incomplete or invalid; the message lists every problem. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

export const DEFAULT_METADATA_MAX_BYTES = 32 * 1024;
/** DynamoDB items are at most 400 KB; metadata must leave room for the rest of the session. */
export const METADATA_MAX_BYTES_CEILING = 350 * 1024;
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
}

/** The tables a function reads or writes, and how to reach DynamoDB. */
export interface StorageConfig<K extends TableKey> {
  tables: Record<K, string>;
  dynamo: DynamoConfig;
}

export type AuthorizerConfig = StorageConfig<'apiKeys'>;

export interface EmbedPageConfig {
  tables: Record<'sessions' | 'boards', string>;
  dynamo: DynamoConfig;
  /** CSP `frame-ancestors` sources: who may put the embed page in a frame. */
  frameAncestors: string;
}

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

/**
 * The local gateway's limit for keys without their own: `API_KEY_RATE_LIMIT` (requests per second) and
 * `API_KEY_BURST_LIMIT`, each defaulting to the stack's default.
 */
export function readApiKeyLimits(env: Env, problems: string[]): RateLimit {
  const { rate, burst } = RATE_LIMIT_BOUNDS;
  return {
    rate: readInteger(env, 'API_KEY_RATE_LIMIT', DEFAULT_API_KEY_LIMITS.rate, rate.min, rate.max, problems),
    burst: readInteger(
      env,
      'API_KEY_BURST_LIMIT',
      DEFAULT_API_KEY_LIMITS.burst,
      burst.min,
      burst.max,
      problems,
    ),
  };
}

/** Reads and validates the configuration of the embed page; throws `ConfigError`. */
export function readEmbedPageConfig(env: Env): EmbedPageConfig {
  const problems: string[] = [];
  const tables = readTables(env, ['sessions', 'boards'], problems);
  const dynamo = readDynamo(env, problems);
  const frameAncestors = readFrameAncestors(env, problems);
  fail(problems);
  return { tables, dynamo, frameAncestors };
}

/** Reads and validates the configuration of the create-session function; throws `ConfigError`. */
export function readCreateSessionConfig(env: Env): CreateSessionConfig {
  const problems: string[] = [];
  const tables = readTables(env, ['boards', 'memberships', 'sessions', 'idempotency'], problems);
  const metadataMaxBytes = readInteger(
    env,
    'METADATA_MAX_BYTES',
    DEFAULT_METADATA_MAX_BYTES,
    1,
    METADATA_MAX_BYTES_CEILING,
    problems,
  );
  const publicBaseUrl = readBaseUrl(env, 'PUBLIC_BASE_URL', problems);
  const dynamo = readDynamo(env, problems);
  fail(problems);
  return {
    tables,
    dynamo,
    publicBaseUrl,
    metadataMaxBytes,
    maxBodyBytes: metadataMaxBytes * BODY_ESCAPING_FACTOR + BODY_OVERHEAD_BYTES,
  };
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
  return readStorageConfig(env, ['apiKeys']);
}

/** Table names for the given tables from their environment variables. */
export function readTables<K extends TableKey>(
  env: Env,
  keys: readonly K[],
  problems: string[],
): Record<K, string> {
  const names = {} as Record<K, string>;
  for (const key of keys) {
    const value = env[TABLES[key].envVar]?.trim();
    if (!value) problems.push(`${TABLES[key].envVar} is required (name of the ${key} table)`);
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
