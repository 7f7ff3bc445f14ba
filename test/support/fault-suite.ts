import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LOCAL_TABLE_NAMES } from '#lib/definitions/tables';
import type { LocalRuntime } from '#local/runtime';
import { type Fault, type FaultProxy, startFaultProxy } from './fault-proxy';
import { validBody } from './fixtures';
import { type CallResult, call, createSessionCall, startTestRuntime } from './local-runtime';
import { captureStdout } from './logs';
import { putPublicBoard } from './public-board';
import { startTestDynamo } from './test-dynamo';

/** The local runtime with a fault proxy between its functions and its DynamoDB. */
export interface RuntimeBehindProxy {
  runtime: LocalRuntime;
  proxy: FaultProxy;
  /** The DynamoDB behind the proxy, for reading what was really written. */
  upstream: string;
  close(): Promise<void>;
}

/** Starts a DynamoDB of this run's engine, a fault proxy in front of it, and the local runtime on the proxy. */
export async function startRuntimeBehindProxy(): Promise<RuntimeBehindProxy> {
  const dynamo = await startTestDynamo();
  const proxy = await startFaultProxy(dynamo.endpoint);
  const runtime = await startTestRuntime({ dynamoEndpoint: proxy.endpoint });
  return {
    runtime,
    proxy,
    upstream: dynamo.endpoint,
    close: async () => {
      await runtime.close();
      await proxy.close();
      await dynamo.close();
    },
  };
}

/**
 * The answer to an outage: 503 JSON with Retry-After; never 401 (not the key) and never 500. That it comes
 * in time is the request budget's rule (test/unit/lib/adapters/http/middlewares/request-budget.test.ts and
 * test/unit/functions/deadlines.test.ts), not a stopwatch's here.
 */
export function expectUnavailable(result: CallResult) {
  expect(result.status, result.text).toBe(503);
  expect(result.headers.get('retry-after')).toBe('2');
  expect(result.headers.get('content-type')).toMatch(/^application\/json/);
  expect(result.body.error).toBe('Service Unavailable');
  expect(Object.keys(result.body).sort()).toEqual(['error', 'message']);
}

/**
 * One runtime behind a fault proxy for the whole test file: the functions read their DynamoDB endpoint
 * once, when they load, so a process serves one runtime. The getter is valid once `beforeAll` ran.
 */
export function useRuntimeBehindProxy(): () => RuntimeBehindProxy {
  let env: RuntimeBehindProxy | undefined;
  let stdout: ReturnType<typeof captureStdout> | undefined;
  beforeAll(async () => {
    // The functions log every outage at warn or error level: the lines are expected, not output.
    stdout = captureStdout();
    env = await startRuntimeBehindProxy();
  });
  afterAll(async () => {
    await env?.close();
    stdout?.restore();
  });
  beforeEach(() => env?.proxy.clear());
  return () => {
    if (!env) throw new Error('the runtime behind the proxy is not started yet');
    return env;
  };
}

/**
 * The fault suite for one way DynamoDB fails: create (at the authorizer's key lookup, and after it at the
 * function's own reads), the embed page, and recovery as soon as the fault clears.
 */
export function describeOutage(env: () => RuntimeBehindProxy, name: string, fault: Fault) {
  describe(`when DynamoDB ${name}`, () => {
    let token: string;
    const create = () =>
      createSessionCall(env().runtime, validBody({ boardId: env().runtime.demo?.publicBoardId }));
    const embed = () =>
      call(env().runtime, `/embed?token=${token}`, { headers: { Accept: 'application/json' } });

    beforeAll(async () => {
      const created = await create();
      expect(created.status).toBe(201);
      token = String(created.body.sessionToken);
    });

    it('answers create with 503 and Retry-After when the API key cannot be looked up, never 401', async () => {
      await env().proxy.inject(fault);
      expectUnavailable(await create());
    });

    // A refused port refuses every function alike, so there is no "after the key was accepted" case.
    if (fault.kind !== 'refuse') {
      it('answers create with 503 and Retry-After when the board cannot be read after the key was accepted', async () => {
        // A board no function has read yet: one read within the last second is served from the
        // function's board cache (docs/api.md), as it should be during an outage of that second.
        const boardId = `board_unread_${randomUUID().slice(0, 8)}`;
        await putPublicBoard(env().runtime, boardId, 'org_faults');
        await env().proxy.inject(fault, { table: LOCAL_TABLE_NAMES.boards });
        expectUnavailable(await createSessionCall(env().runtime, validBody({ boardId })));
      });
    }

    it('answers the embed page with 503 and Retry-After', async () => {
      await env().proxy.inject(fault);
      expectUnavailable(await embed());
    });

    it('recovers as soon as the fault clears', async () => {
      await env().proxy.inject(fault);
      expect((await embed()).status).toBe(503);
      await env().proxy.clear();
      expect((await create()).status).toBe(201);
      expect((await embed()).status).toBe(200);
    });
  });
}
