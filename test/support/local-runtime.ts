import { createHash, randomUUID } from 'node:crypto';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoApiKeyRepository } from '#lib/adapters/dynamodb/api-keys';
import { DynamoBoardRepository } from '#lib/adapters/dynamodb/boards';
import { createDocumentClient } from '#lib/adapters/dynamodb/client';
import { DynamoMembershipRepository } from '#lib/adapters/dynamodb/memberships';
import { DynamoSessionRepository } from '#lib/adapters/dynamodb/sessions';
import { WAF_RATE_LIMIT_BOUNDS } from '#lib/definitions/rate-limits';
import { TABLE_KEYS, TABLES, TTL_ATTRIBUTE } from '#lib/definitions/tables';
import { RATE_LIMIT_BOUNDS, type RateLimit } from '#lib/domain/api-key';
import type { Board } from '#lib/domain/board';
import { idempotencyRecordId, requestFingerprint } from '#lib/domain/idempotency';
import type { StoredSession } from '#lib/domain/session';
import { createLogger, type Logger } from '#lib/platform/logger';
import { cryptoRandom, systemClock } from '#lib/platform/system';
import { addMember, createApiKey, RECORD_ONLY_THROTTLING } from '#lib/use-cases/admin';
import type { MonotonicClock } from '#local/rate-limiter';
import { type LocalRuntime, startLocalRuntime } from '#local/runtime';
import { storedSession } from './fixtures';
import { expectDocumentedResponse } from './openapi';
import { startTestDynamo, testEngine } from './test-dynamo';

/**
 * The per-key limits tests run with unless they ask for others: API Gateway's maxima, so that no test of
 * another rule is ever throttled, however fast it calls.
 */
const UNTHROTTLED: RateLimit = { rate: RATE_LIMIT_BOUNDS.rate.max, burst: RATE_LIMIT_BOUNDS.burst.max };

export interface TestRuntimeOptions {
  /** The limit of keys without their own (API_KEY_RATE_LIMIT, API_KEY_BURST_LIMIT); unthrottled if absent. */
  apiKeyLimits?: RateLimit;
  /** The rate limiter's clock, for tests that move time by hand. */
  rateLimitClock?: MonotonicClock;
  /** A DynamoDB to run on (a fault proxy, say) instead of one of this run's engine. */
  dynamoEndpoint?: string;
  /** The interface to listen on, 127.0.0.1 if absent (HOST under `npm start`). */
  host?: string;
  /** The embed page's loads per 5 minutes per client address (EMBED_PAGE_RATE_LIMIT); unlimited if absent. */
  embedPageRateLimit?: number;
  /**
   * Whether webhook and logout receivers on loopback are allowed (WEBHOOK_ALLOW_LOOPBACK=1), as a developer
   * allows them for a receiver on their machine: true unless false, since the tests' receivers listen on
   * 127.0.0.1. Read when the runtime's handlers load: one value per test file.
   */
  loopbackReceivers?: boolean;
  /** Where the runtime logs (its deliveries' lines included); silent below errors if absent. */
  logger?: Logger;
}

/**
 * What the HTTP integration tests run against: the local runtime (`npm test`), or the synthesized cloud
 * assembly served as deployed (TEST_TARGET=assembly, set by `npm run test:assembly`).
 */
export function testTarget(): 'local' | 'assembly' {
  const value = process.env.TEST_TARGET ?? 'local';
  if (value !== 'local' && value !== 'assembly') {
    throw new Error(`TEST_TARGET must be local or assembly, got "${value}"`);
  }
  return value;
}

/** What links the service builds start with: the base URL, or on the assembly `https://{domain}/{stage}`. */
export function publicBaseUrl(runtime: LocalRuntime): string {
  return 'publicBaseUrl' in runtime ? String(runtime.publicBaseUrl) : runtime.baseUrl;
}

/** A link the service built, as this test reaches it (the assembly is served over plain HTTP). */
export function reachableUrl(runtime: LocalRuntime, link: string): string {
  const base = publicBaseUrl(runtime);
  return link.startsWith(base) ? `${runtime.baseUrl}${link.slice(base.length)}` : link;
}

/**
 * The environment for the admin CLI (`runAdmin`) against the runtime's DynamoDB: its endpoint and its
 * table names (the assembly's are the template's physical names, not the local defaults).
 */
export function adminEnv(runtime: LocalRuntime): Record<string, string> {
  const env: Record<string, string> = { DYNAMODB_ENDPOINT: runtime.dynamoEndpoint, AWS_REGION: 'local' };
  for (const key of TABLE_KEYS) env[TABLES[key].envVar] = runtime.tables[key];
  return env;
}

/**
 * Starts the local runtime on free ports with demo data and silent logs, on the DynamoDB at
 * `dynamoEndpoint`, or else on one of this run's engine (the runtime's embedded dynalite, or a DynamoDB
 * Local of its own that closes with it). Under `npm run test:assembly`, the assembly runner instead.
 */
export async function startTestRuntime(options: TestRuntimeOptions = {}): Promise<LocalRuntime> {
  if (testTarget() === 'assembly') {
    if (Object.keys(options).length > 0) {
      throw new Error('the assembly runner serves the template as synthesized; it takes no test options');
    }
    const { startAssemblyTestRuntime } = await import('#test/assembly/fixture');
    return startAssemblyTestRuntime();
  }
  // Through the environment, which the runtime reads at start as it does under `npm start`.
  const limits = options.apiKeyLimits ?? UNTHROTTLED;
  process.env.API_KEY_RATE_LIMIT = String(limits.rate);
  process.env.API_KEY_BURST_LIMIT = String(limits.burst);
  // Every test loads the embed page from 127.0.0.1: only the test of the limit itself may reach it.
  process.env.EMBED_PAGE_RATE_LIMIT = String(options.embedPageRateLimit ?? WAF_RATE_LIMIT_BOUNDS.max);
  process.env.WEBHOOK_ALLOW_LOOPBACK = options.loopbackReceivers === false ? '0' : '1';
  const own =
    !options.dynamoEndpoint && testEngine() === 'dynamodb-local' ? await startTestDynamo() : undefined;
  try {
    const runtime = await startLocalRuntime({
      port: 0,
      dynamoPort: 0,
      host: options.host,
      dynamoEndpoint: options.dynamoEndpoint ?? own?.endpoint,
      seed: true,
      logger: options.logger ?? createLogger({}, { level: 'error' }),
      rateLimitClock: options.rateLimitClock,
    });
    return own ? { ...runtime, close: () => runtime.close().finally(() => own.close()) } : runtime;
  } catch (error) {
    await own?.close();
    throw error;
  }
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

/** One HTTP request against the runtime; the body is parsed when it is JSON. */
export async function call(
  runtime: LocalRuntime,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<CallResult> {
  const response = await fetch(`${runtime.baseUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: init.headers,
    body: init.body,
  });
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not JSON: tests that care assert on `text`.
  }
  // Every answer an integration test receives must be one the OpenAPI document promises.
  expectDocumentedResponse({
    method: init.method ?? 'GET',
    path,
    status: response.status,
    headers: response.headers,
    text,
  });
  return { status: response.status, headers: response.headers, body, text };
}

/**
 * For the calls that set a test up rather than test it: the result when it has `status`, otherwise an
 * error naming the status and body. A failed setup fails the test as a setup failure, not as one of its
 * assertions.
 */
export function ensureStatus<T extends { status: number; text?: string }>(result: T, status: number): T {
  if (result.status !== status) {
    throw new Error(`setup call answered ${result.status}, expected ${status}: ${result.text ?? ''}`);
  }
  return result;
}

/** POST /api/embed/sessions with the demo key (unless `headers` overrides it). */
export function createSessionCall(
  runtime: LocalRuntime,
  payload: unknown,
  headers: Record<string, string> = {},
): Promise<CallResult> {
  return call(runtime, '/api/embed/sessions', {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${runtime.demo?.apiKey}`,
      'Content-Type': 'application/json',
      ...headers,
    },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
}

/**
 * Writes a session straight into the runtime's table, e.g. one that has expired already; its id. With
 * `ttlSeconds`, its item's TTL is that instead of its expiry: DynamoDB deletes an expired item only
 * eventually (on AWS, within days), while DynamoDB Local's sweep may remove it at once.
 */
export async function storeSession(
  runtime: LocalRuntime,
  token: string,
  fields: { boardId: string; expiresAt: string } & Partial<StoredSession>,
  options: { ttlSeconds?: number } = {},
): Promise<string> {
  const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
  const id = fields.id ?? randomUUID();
  try {
    await new DynamoSessionRepository(db, runtime.tables.sessions).create(
      storedSession({
        id,
        tokenHash: createHash('sha256').update(token).digest('hex'),
        userId: 'u',
        email: 'u@example.com',
        createdAt: new Date(Date.now() - 60_000).toISOString(),
        createdByUserId: runtime.demo?.userId ?? 'user_demo',
        ...fields,
      }),
    );
    if (options.ttlSeconds !== undefined) {
      await db.send(
        new UpdateCommand({
          TableName: runtime.tables.sessions,
          Key: { id },
          UpdateExpression: 'SET #ttl = :ttl',
          ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ':ttl': options.ttlSeconds },
        }),
      );
    }
  } finally {
    db.destroy();
  }
  return id;
}

/**
 * Writes an Idempotency-Key record straight into the runtime's table, as an earlier request of
 * `ownerUserId` with `body` left it: the body's fingerprint, a day to live, then `fields`.
 */
export async function storeIdempotencyRecord(
  runtime: LocalRuntime,
  ownerUserId: string,
  key: string,
  body: string,
  fields: Record<string, unknown>,
): Promise<void> {
  const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
  try {
    await db.send(
      new PutCommand({
        TableName: runtime.tables.idempotency,
        Item: {
          recordId: idempotencyRecordId(ownerUserId, key),
          fingerprint: requestFingerprint(body),
          ttl: Math.floor(Date.now() / 1000) + 86_400,
          ...fields,
        },
      }),
    );
  } finally {
    db.destroy();
  }
}

/** A key owner of the test's own: a fresh API key, and memberships in `orgs`. */
export interface KeyOwnerFixture {
  userId: string;
  keyId: string;
  apiKey: string;
}

/** Issues an API key for `userId` (a new key owner, or another key of an existing one) and adds memberships. */
export async function keyOwner(
  runtime: LocalRuntime,
  userId: string,
  orgs: string[] = [],
): Promise<KeyOwnerFixture> {
  const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
  try {
    for (const orgId of orgs) {
      await addMember(
        { memberships: new DynamoMembershipRepository(db, runtime.tables.memberships), clock: systemClock },
        orgId,
        userId,
      );
    }
    const { apiKey, keyId } = await createApiKey(
      {
        apiKeys: new DynamoApiKeyRepository(db, runtime.tables.apiKeys),
        throttling: RECORD_ONLY_THROTTLING,
        clock: systemClock,
        random: cryptoRandom,
      },
      userId,
      null,
    );
    return { userId, keyId, apiKey };
  } finally {
    db.destroy();
  }
}

/** Removes a membership straight from the table, as an operator would. */
export async function removeMembership(runtime: LocalRuntime, orgId: string, userId: string): Promise<void> {
  const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
  try {
    await new DynamoMembershipRepository(db, runtime.tables.memberships).remove(orgId, userId);
  } finally {
    db.destroy();
  }
}

/** One call to an API-key route with `apiKey`; a body object is sent as JSON. */
export function apiCall(
  runtime: LocalRuntime,
  apiKey: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<CallResult> {
  return call(runtime, path, {
    method,
    headers: {
      Authorization: `Bearer ${apiKey}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** Creates or replaces a board straight in the runtime's table, as an operator would. */
export async function putBoard(runtime: LocalRuntime, board: Board): Promise<void> {
  const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
  try {
    await new DynamoBoardRepository(db, runtime.tables.boards).put(board);
  } finally {
    db.destroy();
  }
}
