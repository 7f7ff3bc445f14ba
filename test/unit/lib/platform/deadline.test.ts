import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { type DeadlineStore, deadlineStoreFor } from '#lib/platform/deadline';

const LAMBDA = { AWS_LAMBDA_FUNCTION_NAME: 'create-session' };
const MULTI_CONCURRENT_LAMBDA = { ...LAMBDA, AWS_LAMBDA_MAX_CONCURRENCY: '8' };

/** Runs two requests with different deadlines whose awaits interleave; each reports the deadline it read. */
async function interleaved(store: DeadlineStore) {
  const request = (deadline: number, firstWait: number) =>
    store.run(deadline, async () => {
      await sleep(firstWait);
      const seen = store.current();
      await sleep(5);
      return [seen, store.current()];
    });
  return Promise.all([request(1_000, 10), request(2_000, 1)]);
}

describe('deadlineStoreFor', () => {
  it.each([
    ['outside Lambda (the local runtime, tests)', {}],
    ['in a Lambda environment that runs invocations concurrently', MULTI_CONCURRENT_LAMBDA],
  ])('keeps one deadline per request %s, however their awaits interleave', async (_where, env) => {
    const store = deadlineStoreFor(env);
    expect(await interleaved(store)).toEqual([
      [1_000, 1_000],
      [2_000, 2_000],
    ]);
    expect(store.current()).toBeUndefined();
  });

  it('in a Lambda environment with one invocation at a time, shares one slot (no async-context tracking)', async () => {
    const store = deadlineStoreFor(LAMBDA);
    // What makes it cheap is also its limit: requests in flight together would see the latest deadline.
    // Lambda never does that to one execution environment unless AWS_LAMBDA_MAX_CONCURRENCY says so.
    const first = store.run(1_000, async () => {
      await Promise.resolve();
      return store.current();
    });
    const second = store.run(2_000, async () => store.current());
    expect(await Promise.all([first, second])).toEqual([2_000, 2_000]);
  });

  it('in a Lambda environment with one invocation at a time, holds the deadline across awaits until the result settles', async () => {
    const store = deadlineStoreFor(LAMBDA);
    expect(store.current()).toBeUndefined();
    const seen: (number | undefined)[] = [];
    const result = store.run(1_000, async () => {
      seen.push(store.current());
      await sleep(5);
      seen.push(store.current());
      return 'done';
    });
    seen.push(store.current());
    expect(await result).toBe('done');
    await Promise.resolve();
    expect(seen).toEqual([1_000, 1_000, 1_000]);
    expect(store.current()).toBeUndefined();
  });

  it('in a Lambda environment with one invocation at a time, clears the deadline after a failure too', async () => {
    const store = deadlineStoreFor(LAMBDA);
    await expect(
      store.run(1_000, async () => {
        await sleep(1);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(store.current()).toBeUndefined();
    expect(() =>
      store.run(2_000, () => {
        throw new Error('sync boom');
      }),
    ).toThrow('sync boom');
    expect(store.current()).toBeUndefined();
    expect(store.run(3_000, () => store.current())).toBe(3_000);
    expect(store.current()).toBeUndefined();
  });

  it("in a Lambda environment with one invocation at a time, a late settling request never clears the next one's deadline", async () => {
    const store = deadlineStoreFor(LAMBDA);
    let finishFirst: () => void = () => {};
    const first = store.run(1_000, () => new Promise<void>((resolve) => (finishFirst = resolve)));
    const second = store.run(2_000, async () => {
      finishFirst();
      await first;
      await Promise.resolve();
      return store.current();
    });
    expect(await second).toBe(2_000);
  });
});
