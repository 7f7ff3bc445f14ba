import { createHash, randomBytes } from 'node:crypto';
import { createDocumentClient } from '#lib/dynamodb/client';
import { DynamoSessionRepository } from '#lib/dynamodb/sessions';
import { createLogger } from '#lib/platform/logger';
import { type LocalRuntime, startLocalRuntime } from '#local/runtime';
import { startTestDynamo, testEngine } from './test-dynamo';

/**
 * Starts the local runtime on free ports with demo data and silent logs, on the DynamoDB at
 * `dynamoEndpoint`, or else on one of this run's engine (the runtime's embedded dynalite, or a DynamoDB
 * Local of its own that closes with it).
 */
export async function startTestRuntime(options: { dynamoEndpoint?: string } = {}): Promise<LocalRuntime> {
  const own =
    !options.dynamoEndpoint && testEngine() === 'dynamodb-local' ? await startTestDynamo() : undefined;
  try {
    const runtime = await startLocalRuntime({
      port: 0,
      dynamoPort: 0,
      dynamoEndpoint: options.dynamoEndpoint ?? own?.endpoint,
      seed: true,
      logger: createLogger({}, { level: 'error' }),
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
  return { status: response.status, headers: response.headers, body, text };
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

/** Writes a session straight into the runtime's table, e.g. one that has expired already. */
export async function storeSession(
  runtime: LocalRuntime,
  token: string,
  fields: { boardId: string; expiresAt: string },
) {
  const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
  try {
    await new DynamoSessionRepository(db, runtime.tables.sessions).create({
      id: randomBytes(8).toString('hex'),
      tokenHash: createHash('sha256').update(token).digest('hex'),
      userId: 'u',
      email: 'u@example.com',
      firstName: null,
      lastName: null,
      avatarUrl: null,
      plan: null,
      metadata: {},
      createdAt: new Date(Date.now() - 60_000).toISOString(),
      ...fields,
    });
  } finally {
    db.destroy();
  }
}
