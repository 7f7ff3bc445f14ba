import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * docs/quickstart.md as tests run it: its ```sh blocks in order, in one bash (so the variables one block sets
 * reach the next), each with the ```text block the page shows after it.
 */
const ROOT = join(import.meta.dirname, '..', '..');
export const QUICKSTART = readFileSync(join(ROOT, 'docs/quickstart.md'), 'utf8');

/** The addresses the page names, which a test replaces with those of what it started. */
export const DOCUMENTED = {
  api: 'http://127.0.0.1:3000',
  dynamodb: 'http://127.0.0.1:8000',
  boardApp: 'http://127.0.0.1:3001',
  hostPage: 'http://localhost:3002',
} as const;

export interface Step {
  command: string;
  /** The ```text block right after the command, if the page shows what it prints. */
  shown?: string;
}

/** The page's ```sh blocks, each with the ```text block that follows it directly, if any. */
export function stepsOf(markdown: string): Step[] {
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
export function shownPattern(shown: string): RegExp {
  const escaped = shown.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('[^\\s]+')}$`);
}

/**
 * A block that starts a server which stays in the foreground until Ctrl-C, as the page says of it: the
 * example host page. The first block (`npm start`) is the other one, which tests start themselves.
 */
export function isForeground(step: Step): boolean {
  return /\bnpm run --silent example:host-page\b/.test(step.command);
}

/** The quickstart's one ```html block holding the host script tag. */
export function quickstartHtml(): string {
  const blocks = [...QUICKSTART.matchAll(/^```html\n([\s\S]*?\/embed\.js\?v=[\s\S]*?)^```$/gm)];
  if (blocks.length !== 1)
    throw new Error(`docs/quickstart.md must hold one html block with embed.js, found ${blocks.length}`);
  return (blocks[0] as RegExpMatchArray)[1] as string;
}

/** A command the shell runs in the background, its output going to a file. */
export interface BackgroundCommand {
  pid: number;
  /** What it printed so far, stdout and stderr. */
  output(): string;
}

/**
 * One bash, `set -euo pipefail`, fed the page's blocks one at a time, in its own process group so that
 * `close` ends it with everything it started. Its environment is the caller's (a `childEnv`).
 */
export class QuickstartShell {
  private readonly bash: ChildProcess;
  private stdout = '';
  private stderr = '';
  private blocks = 0;
  private readonly logs = mkdtempSync(join(tmpdir(), 'quickstart-'));

  constructor(env: Record<string, string>) {
    this.bash = spawn('bash', [], { cwd: ROOT, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    this.bash.stdout?.on('data', (chunk: Buffer) => {
      this.stdout += chunk.toString();
    });
    this.bash.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    this.bash.stdin?.write('set -euo pipefail\n');
  }

  /** Runs `command` to its end; resolves with what it printed on stdout, rejects if the shell stopped. */
  run(command: string): Promise<string> {
    const marker = `@@quickstart-block-${++this.blocks}@@\n`;
    const start = this.stdout.length;
    return new Promise((resolve, reject) => {
      const check = () => {
        const end = this.stdout.indexOf(marker, start);
        if (end === -1) return;
        this.bash.stdout?.off('data', check);
        this.bash.off('exit', stopped);
        resolve(this.stdout.slice(start, end));
      };
      const stopped = (code: number | null) => {
        this.bash.stdout?.off('data', check);
        reject(new Error(`the shell stopped (${code}) in:\n${command}\nstderr:\n${this.stderr}`));
      };
      this.bash.stdout?.on('data', check);
      this.bash.once('exit', stopped);
      this.bash.stdin?.write(`${command.replace(/\n*$/, '\n')}echo '${marker.trim()}'\n`);
    });
  }

  /** Runs a one-line `command` in the background, as a second terminal would, its output in a file. */
  async runInBackground(command: string): Promise<BackgroundCommand> {
    if (command.trim().includes('\n')) throw new Error(`a background block is one command:\n${command}`);
    const log = join(this.logs, `block-${this.blocks + 1}.log`);
    const pid = Number((await this.run(`${command.trim()} > '${log}' 2>&1 &\necho $!`)).trim());
    return {
      pid,
      output: () => {
        try {
          return readFileSync(log, 'utf8');
        } catch {
          return '';
        }
      },
    };
  }

  /** Ends the shell and every process it started. */
  close(): void {
    try {
      if (this.bash.pid !== undefined) process.kill(-this.bash.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
    rmSync(this.logs, { recursive: true, force: true });
  }
}
