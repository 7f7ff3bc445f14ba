import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AUTHORIZER_FAILED } from '#lib/adapters/http/middlewares/authorizer-errors';
import { REQUEST_BUDGET_MS, requestBudgetOf } from '#lib/adapters/http/middlewares/request-budget';
import { FUNCTIONS, type FunctionDefinition, type FunctionName } from '#lib/definitions/routes';
import { embedEvent, jsonEvent, lambdaContext, tokenEvent } from '#test/support/events';
import { startUnansweringServer } from '#test/support/fault-proxy';
import { validBody } from '#test/support/fixtures';
import { type AuthorizerHandler, loadHandler, type ProxyHandler } from '#test/support/harness';
import { captureStdout } from '#test/support/logs';

/**
 * Every function that uses DynamoDB answers before Lambda would time out, however long DynamoDB hangs:
 * its DynamoDB calls share one deadline, within Lambda's remaining time. Here Lambda has 1.5 s left.
 */
const LAMBDA_LEFT_MS = 1_500;

let silent: Awaited<ReturnType<typeof startUnansweringServer>>;
let stdout: ReturnType<typeof captureStdout>;

beforeAll(async () => {
  silent = await startUnansweringServer();
  stdout = captureStdout();
});
afterAll(async () => {
  stdout?.restore();
  vi.unstubAllEnvs();
  await silent?.close();
});

const env = () => ({ DYNAMODB_ENDPOINT: silent.endpoint });

/** The handler's outcome, and the time Lambda had left when it came (0 once Lambda would have timed out). */
async function answered<T>(
  call: (context: Context) => Promise<T>,
): Promise<{ outcome: T | Error; leftMs: number }> {
  const context = lambdaContext('deadline', LAMBDA_LEFT_MS);
  const outcome = await call(context).catch((error: Error) => error);
  return { outcome, leftMs: context.getRemainingTimeInMillis() };
}

describe('a hanging DynamoDB with 1.5 s of Lambda time left', () => {
  it('create-session answers 503 with Retry-After before Lambda times out, not a 500', async () => {
    const handler = await loadHandler<ProxyHandler>(() => import('#functions/create-session'), env());
    const { outcome, leftMs } = await answered((context) => handler(jsonEvent(validBody()), context));
    expect(outcome).toMatchObject({ statusCode: 503, headers: { 'Retry-After': '2' } });
    expect(leftMs).toBeGreaterThan(0);
  });

  it('the embed page answers 503 before Lambda times out, not a 500', async () => {
    const handler = await loadHandler<ProxyHandler>(() => import('#functions/embed-page'), env());
    const { outcome, leftMs } = await answered((context) =>
      handler(embedEvent({ token: 'A'.repeat(32) }), context),
    );
    expect(outcome).toMatchObject({ statusCode: 503, headers: { 'Retry-After': '2' } });
    expect(leftMs).toBeGreaterThan(0);
  });

  it('the authorizer fails (a 503 at API Gateway) before Lambda times out, without blaming the key', async () => {
    const handler = await loadHandler<AuthorizerHandler>(() => import('#functions/authorizer'), env());
    const { outcome, leftMs } = await answered((context) =>
      handler(tokenEvent(`Bearer esk_${'a'.repeat(43)}`), context),
    );
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toBe(AUTHORIZER_FAILED);
    expect(leftMs).toBeGreaterThan(0);
  });
});

describe('the request budget', () => {
  const usingDynamo = (Object.keys(FUNCTIONS) as FunctionName[]).filter(
    (name) => Object.keys(FUNCTIONS[name].access).length > 0,
  );

  const ownTimeout = (name: FunctionName) =>
    (FUNCTIONS[name] as FunctionDefinition).timeoutSeconds !== undefined;

  /** Functions whose work grows with the data: bounded by their Lambda timeout alone. */
  const UNBUDGETED: readonly FunctionName[] = ['revokeUserSessions'];

  it.each(usingDynamo.filter((name) => !UNBUDGETED.includes(name)))(
    'wraps the handler of %s in the 5 s budget, like every function that uses DynamoDB',
    async (name) => {
      const module = (await import(/* @vite-ignore */ `../../../${FUNCTIONS[name].entry}`)) as {
        handler: unknown;
      };
      expect(requestBudgetOf(module.handler)).toBe(REQUEST_BUDGET_MS);
    },
  );

  it.each(UNBUDGETED)(
    'bounds %s, whose count grows with the sessions, by the house Lambda timeout alone',
    async (name) => {
      const module = (await import(/* @vite-ignore */ `../../../${FUNCTIONS[name].entry}`)) as {
        handler: unknown;
      };
      expect(requestBudgetOf(module.handler)).toBe(Number.POSITIVE_INFINITY);
    },
  );

  it('gives no function a timeout of its own: revoke-all writes a cut-off, not every session', () => {
    expect((Object.keys(FUNCTIONS) as FunctionName[]).filter(ownTimeout)).toEqual([]);
  });
});
