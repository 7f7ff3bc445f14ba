import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { AssemblyFunction } from './template';

const WORKER = join(import.meta.dirname, 'lambda-worker.mjs');

/** What a function's invocation failed with, as Lambda reports it (an init error included). */
export class InvocationError extends Error {
  constructor(
    message: string,
    readonly errorType: string,
    readonly init: boolean,
  ) {
    super(message);
  }
}

/** What an execution environment's init failed with (Lambda's `Runtime.*` error types included). */
export interface InitError {
  errorType: string;
  errorMessage: string;
}

interface Instance {
  child: ChildProcess;
  /** Settles when the init has run: with its error, if it threw. */
  ready: Promise<InitError | undefined>;
  busy: boolean;
}

/**
 * The execution environments of one function: Node 24 processes that each load the function's asset
 * once and run one invocation at a time, as Lambda does; another is started when all are busy (up to
 * `maxInstances`, then invocations wait). Each process gets `environment` and nothing else.
 */
export class LambdaFunctionPool {
  private readonly instances: Instance[] = [];
  private readonly waiting: (() => void)[] = [];
  /** The last lines the function wrote (its logs), for diagnostics. */
  readonly output: string[] = [];

  constructor(
    readonly fn: AssemblyFunction,
    private readonly node: string,
    private readonly environment: Record<string, string>,
    private readonly maxInstances = 4,
  ) {}

  private start(): Instance {
    const child = spawn(
      this.node,
      [WORKER, this.fn.codeDir, this.fn.handler, this.fn.name, String(this.fn.memoryMb)],
      { cwd: this.fn.codeDir, env: this.environment, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] },
    );
    const keep = (chunk: Buffer) => {
      this.output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      this.output.splice(0, Math.max(0, this.output.length - 200));
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const ready = new Promise<InitError | undefined>((resolve, reject) => {
      child.once('message', (message: { initError?: InitError }) => resolve(message.initError));
      child.once('exit', (code) =>
        reject(new InvocationError(`exited with ${code}`, 'Runtime.ExitError', true)),
      );
    });
    ready.catch(() => undefined);
    const instance: Instance = { child, ready, busy: false };
    child.once('exit', () => {
      const index = this.instances.indexOf(instance);
      if (index >= 0) this.instances.splice(index, 1);
      this.waiting.shift()?.();
    });
    this.instances.push(instance);
    return instance;
  }

  private async acquire(): Promise<Instance> {
    for (;;) {
      const idle = this.instances.find((instance) => !instance.busy);
      if (idle) {
        idle.busy = true;
        return idle;
      }
      if (this.instances.length < this.maxInstances) {
        const started = this.start();
        started.busy = true;
        return started;
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  private release(instance: Instance): void {
    instance.busy = false;
    this.waiting.shift()?.();
  }

  /**
   * Starts one execution environment and runs only its init, as Lambda does before a first invocation;
   * answers the error the init threw, if any.
   */
  async coldStart(): Promise<InitError | undefined> {
    const instance = this.start();
    try {
      return await instance.ready;
    } catch (error) {
      return { errorType: (error as InvocationError).errorType, errorMessage: (error as Error).message };
    } finally {
      await this.close();
    }
  }

  /** Invokes the function with `event`; resolves to its result, rejects as Lambda would report the error. */
  async invoke(event: unknown): Promise<unknown> {
    const instance = await this.acquire();
    try {
      await instance.ready;
      const id = randomUUID();
      const timeoutMs = this.fn.timeoutSeconds * 1000;
      return await new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          instance.child.kill('SIGKILL');
          reject(
            new InvocationError(`Task timed out after ${this.fn.timeoutSeconds} seconds`, 'Timeout', false),
          );
        }, timeoutMs);
        const onExit = (code: number | null) => {
          clearTimeout(timer);
          reject(new InvocationError(`Runtime exited with ${code}`, 'Runtime.ExitError', false));
        };
        instance.child.once('exit', onExit);
        const onMessage = (
          message: { id?: string; ok: boolean; result?: unknown } & Record<string, unknown>,
        ) => {
          if (message.id !== id) return;
          clearTimeout(timer);
          instance.child.off('message', onMessage);
          instance.child.off('exit', onExit);
          if (message.ok) resolve(message.result);
          else {
            const error = new InvocationError(
              String(message.errorMessage),
              String(message.errorType),
              message.init === true,
            );
            // As Lambda does, an environment whose init failed is not reused.
            if (error.init) instance.child.kill('SIGKILL');
            reject(error);
          }
        };
        instance.child.on('message', onMessage);
        instance.child.send({ id, event, deadline: Date.now() + timeoutMs });
      });
    } finally {
      this.release(instance);
    }
  }

  async close(): Promise<void> {
    await Promise.all(
      this.instances.map(async (instance) => {
        if (instance.child.exitCode !== null || instance.child.signalCode !== null) return;
        const exited = new Promise((resolve) => instance.child.once('exit', resolve));
        instance.child.kill('SIGKILL');
        await exited;
      }),
    );
  }
}
