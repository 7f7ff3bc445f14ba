import { describe, expect, it } from 'vitest';
import { onFirstUse } from '#lib/platform/on-first-use';

describe('onFirstUse', () => {
  it('makes the value once and shares it with every later call', async () => {
    let made = 0;
    const get = onFirstUse(async () => ({ n: ++made }));
    const [first, second] = await Promise.all([get(), get()]);
    expect(await get()).toBe(first);
    expect(second).toBe(first);
    expect(made).toBe(1);
  });

  it('forgets a failure, so the next call makes the value again', async () => {
    let attempts = 0;
    const get = onFirstUse(async () => {
      attempts++;
      if (attempts === 1) throw new Error('key file not readable yet');
      return 'key';
    });
    await expect(get()).rejects.toThrow('key file not readable yet');
    expect(await get()).toBe('key');
    expect(await get()).toBe('key');
    expect(attempts).toBe(2);
  });
});
