import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { childEnv } from './child-env';

export interface MotoServer {
  endpoint: string;
  close(): Promise<void>;
}

/** Why moto_server cannot run here, or undefined when it can. */
export function motoMissing(): string | undefined {
  try {
    execFileSync('which', ['moto_server'], { stdio: 'ignore', env: childEnv() });
    return undefined;
  } catch {
    return 'moto_server is not installed (pip install "moto[server]")';
  }
}

/**
 * Starts moto_server (a real implementation of AWS APIs, KMS among them) on a free port, with an
 * allow-listed environment, and answers its endpoint once it listens.
 */
export async function startMoto(): Promise<MotoServer> {
  const child: ChildProcess = spawn('moto_server', ['-H', '127.0.0.1', '-p', '0'], {
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const endpoint = await new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`moto_server did not start: ${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Running on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`moto_server exited (${code}): ${output}`));
    });
  });
  return {
    endpoint,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
