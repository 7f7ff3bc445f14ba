import { describe, expect, it } from 'vitest';
import { remainingMs, runWithDeadline } from '#lib/platform/deadline';

/** Lets every other request's queued work run first, `turns` times over. */
async function yieldTurns(turns: number): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

describe('the request deadline', () => {
  it('is unknown outside a request', () => {
    expect(remainingMs()).toBeUndefined();
  });

  it('keeps one deadline per request, however the awaits of requests in flight together interleave', async () => {
    const now = Date.now();
    const request = (budgetMs: number, firstWait: number) =>
      runWithDeadline(now + budgetMs, async () => {
        await yieldTurns(firstWait);
        const seen = remainingMs() as number;
        await yieldTurns(2);
        return [seen, remainingMs() as number].map((left) => Math.round((left + Date.now() - now) / 1_000));
      });
    // Each request reads its own budget back (in whole seconds), before and after the other's awaits.
    expect(await Promise.all([request(60_000, 3), request(120_000, 1)])).toEqual([
      [60, 60],
      [120, 120],
    ]);
    expect(remainingMs()).toBeUndefined();
  });

  it('answers 0 once the deadline has passed, never a negative time', () => {
    expect(runWithDeadline(Date.now() - 1_000, () => remainingMs())).toBe(0);
  });
});
