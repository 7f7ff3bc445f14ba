import { createHash, randomUUID } from 'node:crypto';
import type { StoredSession } from '#lib/domain/session';
import { createDocumentClient } from '#lib/dynamodb/client';
import { DynamoSessionRepository } from '#lib/dynamodb/sessions';
import { createLogger } from '#lib/platform/logger';
import { type LocalRuntime, startLocalRuntime } from '#local/runtime';
import { storedSession } from './fixtures';

/** Starts the local runtime on free ports with demo data and silent logs. */
export function startTestRuntime(): Promise<LocalRuntime> {
  return startLocalRuntime({
    port: 0,
    dynamoPort: 0,
    seed: true,
    logger: createLogger({}, { level: 'error' }),
  });
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
  fields: { boardId: string; expiresAt: string } & Partial<StoredSession>,
) {
  const db = createDocumentClient({ endpoint: runtime.dynamoEndpoint, region: 'local' });
  try {
    await new DynamoSessionRepository(db, runtime.tables.sessions).create(
      storedSession({
        id: randomUUID(),
        tokenHash: createHash('sha256').update(token).digest('hex'),
        userId: 'u',
        email: 'u@example.com',
        createdAt: new Date(Date.now() - 60_000).toISOString(),
        createdByUserId: runtime.demo?.userId ?? 'user_demo',
        ...fields,
      }),
    );
  } finally {
    db.destroy();
  }
}
