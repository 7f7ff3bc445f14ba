import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv } from '#test/support/child-env';
import { killNpmStarts, type NpmStart, startNpmStart } from '#test/support/npm-start';

/**
 * docs/quickstart.md is run as a newcomer runs it: `npm start`, then every shell block in order in one
 * shell (so the variables one block sets reach the next), with the service's own ports in place of the
 * default ones the page names. What a block prints must be what the page shows after it.
 */
const ROOT = join(import.meta.dirname, '../..');
const QUICKSTART = readFileSync(join(ROOT, 'docs/quickstart.md'), 'utf8');
const DOCUMENTED_API = 'http://127.0.0.1:3000';
const DOCUMENTED_DYNAMODB = 'http://127.0.0.1:8000';

interface Step {
  command: string;
  /** The ```text block right after the command, if the page shows what it prints. */
  shown?: string;
}

/** The page's ```sh blocks, each with the ```text block that follows it directly, if any. */
function stepsOf(markdown: string): Step[] {
  const blocks = [...markdown.matchAll(/^```(sh|text)\n([\s\S]*?)^```$\n*/gm)];
  const steps: Step[] = [];
  for (const [index, block] of blocks.entries()) {
    if (block[1] !== 'sh') continue;
    const next = blocks[index + 1];
    const adjacent = next?.[1] === 'text' && next.index === (block.index ?? 0) + block[0].length;
    steps.push({ command: block[2] as string, ...(adjacent ? { shown: next[2] as string } : {}) });
  }
  return steps;
}

/** A shown output as a pattern: `…` stands for whatever the service generated (ids, tokens). */
function shownPattern(shown: string): RegExp {
  const escaped = shown.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('[^\\s]+')}$`);
}

let service: NpmStart;
const steps = stepsOf(QUICKSTART);
const [start, ...tasks] = steps;
/** What each task's block printed, in order. */
let printed: string[] = [];

/** The page's text with the service's own addresses in place of the default ones. */
const local = (text: string) =>
  text.replaceAll(DOCUMENTED_API, service.baseUrl).replaceAll(DOCUMENTED_DYNAMODB, service.dynamoEndpoint);

beforeAll(async () => {
  service = await startNpmStart();
  const marker = '@@quickstart-step@@';
  const script = ['set -euo pipefail', ...tasks.map((task) => `echo ${marker}\n${local(task.command)}`)];
  const { stdout } = await promisify(execFile)('bash', ['-c', script.join('\n')], {
    cwd: ROOT,
    env: childEnv(),
  });
  printed = stdout.split(`${marker}\n`).slice(1);
}, 120_000);
afterAll(() => killNpmStarts());

describe('docs/quickstart.md, run as written', () => {
  it('starts the service with `npm install && npm start`, which the test runs as the first step', () => {
    expect(start?.command).toBe('npm install && npm start\n');
    expect(service.output()).toContain(`API base URL       ${service.baseUrl}`);
  });

  it('runs every task block in one shell without a failing command', () => {
    expect(tasks.length).toBeGreaterThanOrEqual(4);
    expect(printed).toHaveLength(tasks.length);
  });

  it('creates a board, a membership and a key whose creation prints no key in the terminal', () => {
    const [created] = printed;
    expect(
      created
        ?.trim()
        .split(/\n(?=\{)/)
        .map((document) => JSON.parse(document)),
    ).toEqual([
      { boardId: 'roadmap', orgId: 'acme', visibility: 'PRIVATE', name: 'Roadmap' },
      expect.objectContaining({ orgId: 'acme', userId: 'acme-backend' }),
    ]);
    expect(created).not.toMatch(/esk_/);
  });

  it.each(tasks.flatMap((task, index) => (task.shown ? [[index + 1, task.shown, index] as const] : [])))(
    'prints what the page shows after task block %i',
    (_number, shown, index) => {
      expect(printed[index]).toMatch(shownPattern(local(shown)));
    },
  );

  it('shows an active session, a link that opens the board, then the revoked session and its refused link', () => {
    expect(tasks.map((task) => task.shown?.trim().split('\n').at(-1))).toEqual([
      undefined,
      `${DOCUMENTED_API}/embed?token=…`,
      '200',
      '401',
    ]);
  });
});

describe('the quickstart checker', () => {
  it('pairs each shell block with the output block right after it, and only that one', () => {
    const page = '```sh\na\n```\n\n```text\n1\n```\n\n```sh\nb\n```\nprose\n```text\nnot b\n```\n';
    expect(stepsOf(page)).toEqual([{ command: 'a\n', shown: '1\n' }, { command: 'b\n' }]);
  });

  it('lets … in a shown output stand for one generated value, not for several lines', () => {
    expect('x?token=abc_D-9\n').toMatch(shownPattern('x?token=…\n'));
    expect('x?token=abc\nmore\n').not.toMatch(shownPattern('x?token=…\n'));
  });
});
