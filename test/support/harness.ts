import type * as Lambda from 'aws-lambda';
import { afterAll, afterEach, beforeAll, beforeEach, expect, vi } from 'vitest';
import { captureStdout } from './logs';

/** A proxy-integration handler as the functions export it. */
export type ProxyHandler = (
  event: Lambda.APIGatewayProxyEvent,
  context: Lambda.Context,
) => Promise<Lambda.APIGatewayProxyResult>;

/** A TOKEN authorizer as the authorizer function exports it. */
export type AuthorizerHandler = (
  event: Lambda.APIGatewayTokenAuthorizerEvent,
  context: Lambda.Context,
) => Promise<Lambda.APIGatewayAuthorizerResult>;

/** What Lambda always sets in a function's environment, and the handlers read at load. */
export const LAMBDA_ENVIRONMENT = { AWS_REGION: 'us-east-1' } as const;

/**
 * Imports a fresh copy of a handler module with Lambda's own variables and `env` added to the test
 * environment. Handlers read their configuration when they load, so each configuration needs its own
 * copy (`vi.resetModules`). Call `vi.unstubAllEnvs()` after the file's tests.
 */
export async function loadHandler<H = ProxyHandler>(
  importModule: () => Promise<{ handler: unknown }>,
  env: Record<string, string> = {},
): Promise<H> {
  vi.resetModules();
  for (const [name, value] of Object.entries({ ...LAMBDA_ENVIRONMENT, ...env })) vi.stubEnv(name, value);
  return (await importModule()).handler as H;
}

/** Command and table of every DynamoDB call an `aws-sdk-client-mock` recorded, in order. */
export function dynamoCalls(mock: { calls(): ReadonlyArray<{ args: readonly unknown[] }> }): string[] {
  return mock.calls().map((call) => {
    const command = call.args[0] as {
      constructor: { name: string };
      input: { TableName?: string; RequestItems?: Record<string, unknown> };
    };
    // A batch names its tables in RequestItems.
    const table = command.input.TableName ?? Object.keys(command.input.RequestItems ?? {}).join(',');
    return `${command.constructor.name} ${table}`;
  });
}

/** The JSON body of a proxy result. */
export function parseBody(result: Lambda.APIGatewayProxyResult): Record<string, unknown> {
  return JSON.parse(result.body) as Record<string, unknown>;
}

/** Asserts the house error shape (`{error, message}` JSON, not cacheable); returns the message. */
export function expectJsonError(result: Lambda.APIGatewayProxyResult, status: number, error: string): string {
  expect(result.statusCode).toBe(status);
  expect(result.headers).toMatchObject({ 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  const body = parseBody(result);
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.error).toBe(error);
  expect(typeof body.message).toBe('string');
  return body.message as string;
}

/**
 * Wires a handler test file around one mocked DynamoDB client: loads the handler once, at the most
 * verbose log level so that any line that could leak a credential is written; re-seeds the mocked
 * tables and captures stdout around every test. `handler()` is the loaded handler, `logs()` what the
 * current test wrote. With `coldPerTest`, every test gets a handler loaded for it: a fresh execution
 * environment, whose per-environment caches (lib/adapters/cache) hold nothing an earlier test read.
 */
export function handlerSuite<H>(options: {
  mock: { reset(): void; restore(): void };
  load: (env: Record<string, string>) => Promise<H>;
  seed: () => void;
  coldPerTest?: boolean;
}): { handler: () => H; logs: () => string } {
  let handler: H | undefined;
  let stdout: ReturnType<typeof captureStdout> | undefined;
  beforeAll(async () => {
    handler = await options.load({ LOG_LEVEL: 'debug' });
  });
  beforeEach(async () => {
    if (options.coldPerTest) {
      // What an earlier test stubbed is no part of this environment.
      vi.unstubAllEnvs();
      handler = await options.load({ LOG_LEVEL: 'debug' });
    }
    options.mock.reset();
    options.seed();
    stdout = captureStdout();
  });
  afterEach(() => {
    stdout?.restore();
  });
  afterAll(() => {
    vi.unstubAllEnvs();
    options.mock.restore();
  });
  return {
    handler: () => {
      if (!handler) throw new Error('handlerSuite: the handler is not loaded yet');
      return handler;
    },
    logs: () => stdout?.text() ?? '',
  };
}
