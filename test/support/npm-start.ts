import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { vi } from 'vitest';
import { childEnv } from './child-env';
import { collectOutput } from './child-output';

const ROOT = join(import.meta.dirname, '..', '..');

/** `npm start` running in its own process group, as a developer runs it in a terminal. */
export interface NpmStart {
  /** The npm process; its process group holds the whole service. */
  npm: ChildProcess;
  /** Everything the service printed so far (stdout and stderr). */
  output(): string;
  baseUrl: string;
  /** The DynamoDB endpoint the banner names (embedded or `DYNAMODB_ENDPOINT`). */
  dynamoEndpoint: string;
  apiKey: string;
  embedUrl: string;
  /** The reference board application's origin (the demo boards' appUrl is `{origin}/handoff`). */
  boardAppOrigin: string;
  /** Every process of the service when it had started: npm and its descendants. */
  pids: number[];
  /** The process listening on the API port (the server itself). */
  serverPid: number;
  /** Resolves when npm has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs `npm start` from the repository as a newcomer does, in a shell holding only PATH and HOME, plus
 * `env` (PORT, DYNAMODB_PORT and BOARD_APP_PORT default to 0, so it picks free ports), and waits for its banner. Call
 * `killNpmStarts` when done, whatever happened, so no process outlives the test.
 */
export async function startNpmStart(env: Record<string, string> = {}, timeoutMs = 60_000): Promise<NpmStart> {
  // Its own process group: a signal to the group is what a terminal's Ctrl-C sends.
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    env: childEnv({ PORT: '0', DYNAMODB_PORT: '0', BOARD_APP_PORT: '0', ...env }),
    detached: true,
    stdio: 'pipe',
  });
  started.add(npm);
  const output = collectOutput(npm);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    npm.once('exit', (code, signal) => resolve({ code, signal })),
  );
  // The banner, or the exit before it, whichever comes first.
  const banner = vi.waitFor(
    () => {
      if (!/Admin CLI against this runtime/.test(output()))
        throw new Error(`npm start printed no banner within ${timeoutMs} ms:\n${output()}`);
    },
    { timeout: timeoutMs, interval: 50 },
  );
  const exitedFirst = exited.then(() => {
    throw new Error(`npm start exited before its banner:\n${output()}`);
  });
  exitedFirst.catch(() => {});
  await Promise.race([banner, exitedFirst]);
  const field = (pattern: RegExp) => {
    const value = pattern.exec(output())?.[1];
    if (!value) throw new Error(`banner without ${pattern}:\n${output()}`);
    return value;
  };
  const baseUrl = field(/API base URL\s+(\S+)/);
  const pids = [npm.pid as number, ...descendantsOf(npm.pid as number)];
  const port = Number(new URL(baseUrl).port);
  const serverPid = pids.find((pid) => listensOn(pid, port));
  if (serverPid === undefined) throw new Error(`no process of npm start listens on ${port}`);
  return {
    npm,
    output,
    baseUrl,
    dynamoEndpoint: field(/DynamoDB\s+(http\S+)/),
    apiKey: field(/Demo API key\s+(esk_\S+)/),
    embedUrl: field(/^\s+(http\S+\/embed\?token=\S+)$/m),
    boardAppOrigin: field(/Board application\s+(\S+)/),
    pids,
    serverPid,
    exited,
  };
}

const started = new Set<ChildProcess>();

/** Kills the process group of every `npm start` this process started that is still running (each file calls it when it ends). */
export function killNpmStarts(): void {
  for (const npm of started) {
    try {
      if (npm.pid !== undefined) process.kill(-npm.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  started.clear();
}

/** Pids of every live descendant of `pid`, read from /proc (Linux). */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (!stat) continue;
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift() as number) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** True while the process exists and is not a zombie waiting to be reaped. */
export function isAlive(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

function procStat(pid: number): { ppid: number; state: string } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself contain spaces or parentheses.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', ppid: Number(fields[1]) };
  } catch {
    return undefined;
  }
}

/** True when `pid` has a listening TCP socket on `port` (from /proc/<pid>/fd and /proc/net/tcp). */
function listensOn(pid: number, port: number): boolean {
  const listening = listeningInodes(port);
  return socketInodesOf(pid).some((inode) => listening.has(inode));
}

function socketInodesOf(pid: number): string[] {
  const inodes: string[] = [];
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match?.[1]) inodes.push(match[1]);
      } catch {
        // The descriptor closed meanwhile.
      }
    }
  } catch {
    // The process is gone.
  }
  return inodes;
}

/** Inodes of the sockets listening on `port`, IPv4 and IPv6. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; the inode is column 10.
      if (cols[1]?.endsWith(`:${hexPort}`) && cols[3] === '0A' && cols[9]) inodes.add(cols[9]);
    }
  }
  return inodes;
}

/** Resolves true when nothing accepts TCP connections on the URL's port any more. */
export function portClosed(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}
