import { describe, expect, it } from 'vitest';
import { BenchProgress, formatDuration } from '#test/bench/progress';

describe('formatDuration', () => {
  it('gives seconds under a minute, then minutes and two-digit seconds', () => {
    expect(formatDuration(0)).toBe('0 s');
    expect(formatDuration(44_600)).toBe('45 s');
    expect(formatDuration(60_000)).toBe('1 min 00 s');
    expect(formatDuration(185_000)).toBe('3 min 05 s');
  });
});

describe('BenchProgress', () => {
  const scenarios = [
    { label: 'build the bundles', expectedMs: 20_000 },
    { label: 'cold init on Node 20', expectedMs: 200_000 },
    { label: 'revoke-all of 10 sessions', expectedMs: 5_000 },
  ];

  function run() {
    const lines: string[] = [];
    let now = 1_000_000;
    const tracker = new BenchProgress(
      scenarios,
      (line) => lines.push(line),
      () => now,
    );
    return { lines, tracker, advance: (ms: number) => (now += ms) };
  }

  it('prints the total expected time before anything runs', () => {
    const { lines, tracker } = run();
    tracker.start();
    expect(lines).toEqual([
      'bench: 3 scenarios, about 3 min 45 s expected (a quiet 2-core machine; a busy one takes longer)',
    ]);
  });

  it('prints a line per scenario as it finishes: its time, the time so far and about how long is left', () => {
    const { lines, tracker, advance } = run();
    tracker.start();
    advance(18_000);
    tracker.done('build the bundles');
    advance(250_000);
    tracker.done('cold init on Node 20');
    advance(4_000);
    tracker.done('revoke-all of 10 sessions');
    expect(lines.slice(1)).toEqual([
      'bench: [1/3] build the bundles: 18 s (18 s so far, about 3 min 25 s left)',
      'bench: [2/3] cold init on Node 20: 4 min 10 s (4 min 28 s so far, about 5 s left)',
      'bench: [3/3] revoke-all of 10 sessions: 4 s (4 min 32 s so far, all done)',
    ]);
  });

  it('refuses a scenario finished out of the planned order, so the plan cannot drift from the run', () => {
    const { tracker } = run();
    expect(() => tracker.done('cold init on Node 20')).toThrow(/expected "build the bundles"/);
  });
});
